package iceberg

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// flatKinds are the kinds of allKinds that the direct Parquet path writes (parquetwrite.go).
var flatKinds = schemas.New(allKinds.Fields[:7]...)

func flatRow(i int) schemas.Row { return kindRow(i)[:7] }

// TestDirectFilesAsIcebergGoWrites writes rows of every flat kind, nulls included, into an
// unpartitioned table through the direct path, and checks what a reader relies on against
// iceberg-go's own writer given the same rows: the data file's record count, value and null
// counts and lower and upper bounds per column, one split offset per row group, and the
// Parquet columns' field ids. iceberg-go's scan reads every row back, and a filtered scan
// prunes by the file's bounds.
func TestDirectFilesAsIcebergGoWrites(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct", lanes: 1}
	s := w.build(flatKinds, "db.flat")
	h.open(s, "")
	defer s.Close(context.Background())
	const n = 300
	h.write(s, flatKinds, 0, 0, n, flatRow)
	h.flush(s, 1)
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Commit(s, 1, n)
	wr := s.tables["db.flat"].wr.Load()
	if wr.direct == nil {
		t.Fatal("the table is not written by the direct path")
	}

	tbl := w.load("db.flat")
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("%d data files, want 1", len(tasks))
	}
	got := tasks[0].File

	want := icebergGoFiles(t, wr, n)[0]
	if got.Count() != n || want.Count() != n {
		t.Fatalf("record counts %d (direct) and %d (iceberg-go), want %d", got.Count(), want.Count(), n)
	}
	sameMetrics(t, "the file", got, want)
	if len(got.NullValueCounts()) != len(flatKinds.Fields) || len(got.LowerBoundValues()) != len(flatKinds.Fields) {
		t.Errorf("metrics of %d columns (nulls) and %d (bounds), want %d", len(got.NullValueCounts()), len(got.LowerBoundValues()), len(flatKinds.Fields))
	}
	if ids := slices.Sorted(maps.Keys(got.ColumnSizes())); !slices.Equal(ids, slices.Sorted(maps.Keys(want.ColumnSizes()))) {
		t.Errorf("column sizes of fields %v, iceberg-go has %v", ids, slices.Sorted(maps.Keys(want.ColumnSizes())))
	}
	if len(got.SplitOffsets()) != 1 || got.FileSizeBytes() <= 0 {
		t.Errorf("split offsets %v and size %d, want one row group", got.SplitOffsets(), got.FileSizeBytes())
	}

	// The Parquet schema carries the table's field ids.
	pf, err := file.OpenParquetFile(strings.TrimPrefix(got.FilePath(), "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for i := range pf.MetaData().Schema.NumColumns() {
		col := pf.MetaData().Schema.Column(i)
		f, ok := tbl.Schema().FindFieldByName(col.Name())
		if !ok || int(col.SchemaNode().FieldID()) != f.ID {
			t.Errorf("column %s has field id %d, the table's is %d", col.Name(), col.SchemaNode().FieldID(), f.ID)
		}
	}

	// Every row reads back.
	w.checkScan("db.flat", flatKinds, n, flatRow)
	// A filter outside the bounds plans no file; one inside plans it.
	for filter, files := range map[iceberg.BooleanExpression]int{
		iceberg.GreaterThan(iceberg.Reference("id"), int64(n)):   0,
		iceberg.GreaterThan(iceberg.Reference("id"), int64(n-2)): 1,
		iceberg.EqualTo(iceberg.Reference("name"), "name-999"):   0,
		iceberg.EqualTo(iceberg.Reference("name"), "name-1"):     1,
	} {
		tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != files {
			t.Errorf("filter %s plans %d files, want %d", filter, len(tasks), files)
		}
	}
}

// TestDirectPathBadRowToErrorOutput sends a row whose value does not fit its column to the
// error output with the Arrow conversion's message, and writes the others.
func TestDirectPathBadRowToErrorOutput(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-bad", lanes: 1}
	s := w.build(flatKinds, "db.flat")
	h.open(s, "")
	defer s.Close(context.Background())
	b := &schemas.Batch{Schema: flatKinds}
	for i := range 10 {
		row := flatRow(i)
		if i == 4 {
			row[3] = int64(7) // name is a string column
		}
		b.Rows = append(b.Rows, row)
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	err := s.Writer(0).Write(context.Background(), b)
	if err == nil || !strings.Contains(err.Error(), `column "name" holds 7, which is not a string`) || !strings.Contains(err.Error(), "offset 4") {
		t.Fatalf("write: %v, want the bad row's column, value and offset", err)
	}
}

// TestDirectPathSkipsDictionariesThatFellBack writes three epochs with dictionaries of 1 KiB:
// the first file of the lane tries a dictionary for every column, and the next ones write the
// columns whose dictionary outgrew the limit (name, all distinct) plain from the start, while
// the one that fits (day, 40 dates) keeps its dictionary. Every row reads back. (A dictionary
// that falls back leaves no trace in the file, so the lane's memory of it is checked too.)
func TestDirectPathSkipsDictionariesThatFellBack(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-dict", lanes: 1}
	s := w.build(flatKinds, "db.flat", "table_properties: {write.parquet.dict-size-bytes: '1024'}")
	h.open(s, "")
	defer s.Close(context.Background())
	d := connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
	const per = 400
	for epoch := range uint64(3) {
		h.write(s, flatKinds, 0, int(epoch)*per, int(epoch+1)*per, flatRow)
		h.flush(s, epoch+1)
		d.Commit(s, epoch+1, int(epoch+1)*per)
	}
	if got := sorted(w.ids("db.flat")); !slices.Equal(got, seq(0, 3*per)) {
		t.Fatalf("scan: %d ids, want 0..%d", len(got), 3*per-1)
	}
	dict := map[string][]bool{} // by column: has a dictionary page, file by file in write order
	files := w.dataFiles("db.flat")
	slices.Sort(files) // named by the lane's file count
	for _, path := range files {
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		rg := pf.MetaData().RowGroup(0)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			dict[cc.PathInSchema().String()] = append(dict[cc.PathInSchema().String()], cc.HasDictionaryPage())
		}
		pf.Close()
	}
	lane := s.writers[0].files[s.tables["db.flat"]]
	if next := lane.props(); next.DictionaryEnabledFor("name") || !next.DictionaryEnabledFor("day") {
		t.Errorf("the lane's next file has dictionaries for name %v and day %v, want false and true (plain: %v)",
			next.DictionaryEnabledFor("name"), next.DictionaryEnabledFor("day"), lane.plain)
	}
	if want := []bool{false, false, false}; !slices.Equal(dict["name"], want) {
		t.Errorf("name has a dictionary in files %v, want %v", dict["name"], want)
	}
	if want := []bool{true, true, true}; !slices.Equal(dict["day"], want) {
		t.Errorf("day has a dictionary in files %v, want %v", dict["day"], want)
	}
}

// TestDirectPathNewWritingRollsFile replaces a table's writing mid-epoch, as a change of its
// schema does: the lane ends the file it had open and writes the rest into a new one, and
// the epoch commits both.
func TestDirectPathNewWritingRollsFile(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-rewrite", lanes: 1}
	s := w.build(flatKinds, "db.flat", "table_properties: {write.parquet.dict-size-bytes: '1024'}") // name falls back
	h.open(s, "")
	defer s.Close(context.Background())
	h.write(s, flatKinds, 0, 0, 100, flatRow)
	ts := s.tables["db.flat"]
	wr, err := newWriting(ts.tbl, s.cat, flatKinds)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	ts.wr.Store(wr)
	s.mu.Unlock()
	h.write(s, flatKinds, 0, 100, 250, flatRow)
	h.flush(s, 1)
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Commit(s, 1, 250)
	if files := w.dataFiles("db.flat"); len(files) != 2 {
		t.Fatalf("%d data files, want 2 (one per writing)", len(files))
	}
	w.checkScan("db.flat", flatKinds, 250, flatRow)
}
