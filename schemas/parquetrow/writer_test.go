package parquetrow

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/sluicehq/sluice/schemas"
)

func getter(names ...string) func(string) func(schemas.Row) any {
	return func(name string) func(schemas.Row) any {
		for i, n := range names {
			if n == name {
				return func(r schemas.Row) any { return r[i] }
			}
		}
		return nil
	}
}

// TestWriterRowGroupsNullsAndBadRows writes batches into row groups bounded by rows, with
// nulls and a column the rows lack; a batch with a bad row writes nothing and names the row.
// arrow-go's reader reads the values back.
func TestWriterRowGroupsNullsAndBadRows(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "missing", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sc, getter("id", "name"), parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(150)), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from int) []schemas.Row {
		var rows []schemas.Row
		for i := from; i < from+100; i++ {
			var name any = "n"
			if i%3 == 0 {
				name = nil
			}
			rows = append(rows, schemas.Row{int64(i), name})
		}
		return rows
	}
	bad := batch(1000)
	bad[42][1] = int64(5)
	var re *RowError
	if err := w.Write(bad); !errors.As(err, &re) || re.Index != 42 || re.Column != "name" {
		t.Fatalf("bad batch: %v, want the row at 42, column name", err)
	}
	for from := 0; from < 300; from += 100 {
		if err := w.Write(batch(from)); err != nil {
			t.Fatal(err)
		}
		// Also right after a row group ended: an upsert deletes rows by these positions.
		if w.Rows() != int64(from+100) {
			t.Fatalf("%d rows written after the batch from %d, want %d", w.Rows(), from, from+100)
		}
	}
	if w.Rows() != 300 {
		t.Fatalf("%d rows written, want 300", w.Rows())
	}
	meta, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumRowGroups() != 2 || meta.RowGroup(0).NumRows() != 200 {
		t.Fatalf("%d row groups, the first of %d rows; want 2, of 200 (ended after the batch that reached 150)", meta.NumRowGroups(), meta.RowGroup(0).NumRows())
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	nulls := 0
	for g := range pf.NumRowGroups() {
		rg := pf.RowGroup(g)
		cr, _ := rg.Column(0)
		vals := make([]int64, rg.NumRows())
		n, _, _ := cr.(*file.Int64ColumnChunkReader).ReadBatch(rg.NumRows(), vals, nil, nil)
		ids = append(ids, vals[:n]...)
		cr, _ = rg.Column(2)
		def := make([]int16, rg.NumRows())
		_, _, _ = cr.(*file.Float64ColumnChunkReader).ReadBatch(rg.NumRows(), make([]float64, rg.NumRows()), def, nil)
		for _, d := range def {
			if d == 0 {
				nulls++
			}
		}
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("id %d at row %d, want %d (the bad batch must not be written)", id, i, i)
		}
	}
	if len(ids) != 300 || nulls != 300 {
		t.Fatalf("%d ids and %d nulls of the missing column, want 300 and 300", len(ids), nulls)
	}
}

// TestWriterEndRowGroup ends row groups by hand, as a partitioned table's writer does to bound
// its memory: what the open row group held is released, the rows of an ended row group still
// count (a file whose only row group ended at its last Write was taken for empty and dropped),
// and the file holds every row group.
func TestWriterEndRowGroup(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sc, getter("id", "name"), parquet.NewWriterProperties(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from, n int) []schemas.Row {
		var rows []schemas.Row
		for i := from; i < from+n; i++ {
			rows = append(rows, schemas.Row{int64(i), fmt.Sprintf("name %d", i)})
		}
		return rows
	}
	if err := w.Write(batch(0, 100)); err != nil {
		t.Fatal(err)
	}
	if h := w.Held(); h < 100*8 {
		t.Fatalf("the open row group holds %d bytes, want at least the 800 of its ids", h)
	}
	if err := w.EndRowGroup(); err != nil {
		t.Fatal(err)
	}
	if w.Held() != 0 || w.Rows() != 100 {
		t.Fatalf("after the end of the row group: %d bytes held and %d rows, want 0 and 100", w.Held(), w.Rows())
	}
	if buf.Len() < 100*8 {
		t.Fatalf("%d bytes written out, want the row group's pages", buf.Len())
	}
	if err := w.Write(batch(100, 50)); err != nil {
		t.Fatal(err)
	}
	meta, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumRows != 150 || meta.NumRowGroups() != 2 || meta.RowGroup(0).NumRows() != 100 {
		t.Fatalf("%d rows in %d row groups, want 150 in 2 (100 and 50)", meta.NumRows, meta.NumRowGroups())
	}
}
