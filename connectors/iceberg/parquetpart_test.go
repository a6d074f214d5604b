package iceberg

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"path"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// TestDirectPartitionedFilesAsIcebergGoWrites writes rows of every flat kind from two lanes
// into a table partitioned by bucket(id, 4) and truncate(name, 6) (null names included)
// through the direct path, and checks its data files against iceberg-go's writer given the
// same rows: one file per partition for the epoch, with the same partition values, directory,
// record counts and metrics. iceberg-go's scan reads every row back, and a filter on id plans
// only the file of its bucket.
func TestDirectPartitionedFilesAsIcebergGoWrites(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-part", lanes: 2}
	s := w.build(flatKinds, "db.flat", `partition_fields: ["bucket(id, 4)", "truncate(name, 6)"]`)
	h.open(s, "")
	defer s.Close(context.Background())
	const n = 300
	h.write(s, flatKinds, 0, 0, n, flatRow)
	h.flush(s, 1)
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Commit(s, 1, n)
	wr := s.tables["db.flat"].wr.Load()
	if wr.direct == nil || wr.direct.part == nil {
		t.Fatal("the table is not written by the direct path")
	}

	tbl := w.load("db.flat")
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]iceberg.DataFile{} // by partition
	for _, task := range tasks {
		key := fmt.Sprint(task.File.Partition())
		if got[key] != nil {
			t.Errorf("two files of partition %s in one epoch", key)
		}
		got[key] = task.File
	}

	want := map[string]iceberg.DataFile{}
	for _, df := range icebergGoFiles(t, wr, n) {
		want[fmt.Sprint(df.Partition())] = df
	}
	if len(got) != len(want) || len(want) < 20 {
		t.Fatalf("%d partitions written directly, iceberg-go writes %d (want at least 20)", len(got), len(want))
	}
	for key, wf := range want {
		gf := got[key]
		if gf == nil {
			t.Errorf("no direct file of partition %s", key)
			continue
		}
		if path.Dir(gf.FilePath()) != path.Dir(wf.FilePath()) {
			t.Errorf("partition %s: directory %s, iceberg-go's %s", key, path.Dir(gf.FilePath()), path.Dir(wf.FilePath()))
		}
		if gf.SpecID() != wf.SpecID() || gf.Count() != wf.Count() {
			t.Errorf("partition %s: spec %d and %d rows, iceberg-go's %d and %d", key, gf.SpecID(), gf.Count(), wf.SpecID(), wf.Count())
		}
		sameMetrics(t, "partition "+key, gf, wf)
	}

	w.checkScan("db.flat", flatKinds, n, flatRow)
	// A filter on id plans only files of its bucket, and the file holding it: a file with a
	// wrong bucket would be pruned away, or planned for another id.
	bucket := iceberg.BucketTransform{NumBuckets: 4}.Transformer(iceberg.PrimitiveTypes.Int64)
	for id := int64(1); id < n; id += 23 {
		tasks, err = tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("id"), id))).PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		holds := false
		for _, task := range tasks {
			if b := task.File.Partition()[1000]; b != bucket(id).Val {
				t.Errorf("id %d (bucket %d) plans a file of bucket %v", id, bucket(id).Val, b)
			}
			lo, hi := task.File.LowerBoundValues()[1], task.File.UpperBoundValues()[1]
			holds = holds || (id >= decodeLong(lo) && id <= decodeLong(hi))
		}
		if !holds {
			t.Errorf("id %d plans %d files, none holding it", id, len(tasks))
		}
	}
}

// TestDirectPartitionedFilesBounded writes a partitioned table's epoch from two lanes with
// the bound on the open files' memory at 1 byte, so that every write ends its partition's row
// group: still one file per partition, each of several row groups (split offsets), with
// iceberg-go's metrics for the same rows, and every row read back by iceberg-go's scan.
func TestDirectPartitionedFilesBounded(t *testing.T) {
	defer func(b int64) { partBufferBytes = b }(partBufferBytes)
	partBufferBytes = 1
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-part-bound", lanes: 2}
	s := w.build(flatKinds, "db.flat", `partition_fields: ["bucket(id, 4)"]`)
	h.open(s, "")
	defer s.Close(context.Background())
	const n = 400
	for from := 0; from < n; from += 100 {
		h.write(s, flatKinds, 0, from, from+100, flatRow)
	}
	h.flush(s, 1)
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Commit(s, 1, n)
	wr := s.tables["db.flat"].wr.Load()
	if wr.direct == nil || wr.direct.part == nil {
		t.Fatal("the table is not written by the direct path")
	}
	want := map[string]iceberg.DataFile{}
	for _, df := range icebergGoFiles(t, wr, n) {
		want[fmt.Sprint(df.Partition())] = df
	}
	tasks, err := w.load("db.flat").Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != len(want) || len(want) != 4 {
		t.Fatalf("%d files, want one per partition (%d)", len(tasks), len(want))
	}
	for _, task := range tasks {
		key := fmt.Sprint(task.File.Partition())
		if len(task.File.SplitOffsets()) < 4 {
			t.Errorf("partition %s: %d row groups, want one per write (at least 4)", key, len(task.File.SplitOffsets()))
		}
		if wf := want[key]; wf == nil || task.File.Count() != wf.Count() {
			t.Errorf("partition %s: %d rows, iceberg-go writes %v", key, task.File.Count(), wf)
		} else {
			sameMetrics(t, "partition "+key, task.File, wf)
		}
	}
	w.checkScan("db.flat", flatKinds, n, flatRow)
}

func decodeLong(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }

// TestDirectPartitionedBadRows: with error_handling, rows of a partitioned table whose value
// does not fit (one in the partition's source column, one in another column) go to the error
// output in the batch's order, and the others are written once each.
func TestDirectPartitionedBadRows(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "direct-part-bad", lanes: 1}
	ctx := context.Background()
	s := w.build(flatKinds, "db.flat", `partition_fields: ["bucket(id, 4)", "truncate(name, 6)"]`, "error_handling: {output: bad}")
	h.open(s, "")
	defer s.Close(ctx)
	b := &schemas.Batch{Schema: flatKinds}
	for i := range 40 {
		row := flatRow(i)
		switch i {
		case 9:
			row[2] = "high" // score is a double
		case 30:
			row[3] = int64(7) // name is a string, and partitions the table
		}
		b.Rows = append(b.Rows, row)
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	var dead []schemas.Row
	emit := func(_ string, e *schemas.Batch) error { dead = append(dead, e.Rows...); return nil }
	if err := s.Writer(0).(component.ErrorWriter).WriteWithErrors(ctx, b, emit); err != nil {
		t.Fatal(err)
	}
	h.flush(s, 1)
	h.driver().Commit(s, 1, 40)
	idOf := func(r schemas.Row) any { m, _ := r[0].(map[string]any); return m["id"] }
	if len(dead) != 2 || idOf(dead[0]) != int64(9) || idOf(dead[1]) != int64(30) {
		t.Fatalf("error rows %v, want the rows of ids 9 and 30", dead)
	}
	want := slices.DeleteFunc(seq(0, 40), func(id int64) bool { return id == 9 || id == 30 })
	if got := sorted(w.ids("db.flat")); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
}

// icebergGoFiles writes flatRow(0..n-1) through iceberg-go's writer with the table's writing wr,
// without committing them, and returns its data files.
func icebergGoFiles(t *testing.T, wr *writing, n int) []iceberg.DataFile {
	t.Helper()
	rows := make([]schemas.Row, n)
	for i := range rows {
		rows[i] = flatRow(i)
	}
	rec, err := wr.conv.Record(rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []iceberg.DataFile
	for df, err := range table.WriteRecords(context.Background(), wr.tbl, wr.conv.Schema(), iter.Seq2[arrow.RecordBatch, error](
		func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })) {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, df)
	}
	return files
}

// sameMetrics checks that the direct path's file got has the metrics of iceberg-go's want.
func sameMetrics(t *testing.T, what string, got, want iceberg.DataFile) {
	t.Helper()
	for name, pair := range map[string][2]any{
		"value counts":      {got.ValueCounts(), want.ValueCounts()},
		"null value counts": {got.NullValueCounts(), want.NullValueCounts()},
		"lower bounds":      {got.LowerBoundValues(), want.LowerBoundValues()},
		"upper bounds":      {got.UpperBoundValues(), want.UpperBoundValues()},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: %s: direct %v, iceberg-go %v", what, name, pair[0], pair[1])
		}
	}
}
