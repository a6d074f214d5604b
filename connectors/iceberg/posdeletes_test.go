package iceberg

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/sluicehq/sluice/schemas"
)

// TestPositionDeletesApplyInTheirSnapshot checks what upserts build on in iceberg-go v0.7.0:
// a position delete file committed in the same row delta as the data file it names deletes
// that file's rows in iceberg-go's scan (a position delete applies to data files of a lower
// or the same data sequence number), while an equality delete of the same snapshot leaves
// them (it applies to lower ones only).
func TestPositionDeletesApplyInTheirSnapshot(t *testing.T) {
	ctx := context.Background()
	w := newWarehouse(t)
	s := w.openUpsert("cdc")
	wr := s.tables["db.cdc"].wr.Load()
	if wr.direct == nil {
		t.Fatal("the table is not written by the direct path")
	}
	f := newRowFiles(wr.direct, 0)
	if err := f.write(ctx, []schemas.Row{{int64(1), "a"}, {int64(2), "b"}, {int64(3), "c"}, {int64(4), "d"}}); err != nil {
		t.Fatal(err)
	}
	data, err := f.end()
	if err != nil || len(data) != 1 {
		t.Fatalf("data files %v, %v", data, err)
	}
	path := data[0].FilePath()
	pos, err := writePosDeletes(ctx, wr.tbl, []posDelete{{path, 3}, {path, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if pos.ContentType() != iceberg.EntryContentPosDeletes || pos.Count() != 2 {
		t.Fatalf("the position delete file is %v with %d rows", pos.ContentType(), pos.Count())
	}

	// An equality delete of key 3 in the same snapshot.
	sc := arrow.NewSchema([]arrow.Field{wr.conv.Schema().Field(0)}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	b.Field(0).(*array.Int64Builder).Append(3)
	rec := b.NewRecordBatch()
	b.Release()
	idField, _ := wr.tbl.Schema().FindFieldByName("id")
	eq, err := wr.tbl.NewTransaction().WriteEqualityDeletes(ctx, []int{idField.ID}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	if err != nil {
		t.Fatal(err)
	}

	// Another writer's commits first: the row delta is validated against the table's head,
	// and its position deletes name files that only the delta itself adds.
	for i, id := range []int64{5, 6} {
		other := newRowFiles(wr.direct, 1+i)
		if err := other.write(ctx, []schemas.Row{{id, "e"}}); err != nil {
			t.Fatal(err)
		}
		files, err := other.end()
		if err != nil {
			t.Fatal(err)
		}
		txn := w.load("db.cdc").NewTransaction()
		if err := txn.AddDataFiles(ctx, files, iceberg.Properties{}); err != nil {
			t.Fatal(err)
		}
		if _, err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	txn := w.load("db.cdc").NewTransaction()
	if err := stageRowDelta(ctx, txn, data, append(eq, pos), iceberg.Properties{}); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(w.ids("db.cdc")))
	if !slices.Equal(got, []int64{1, 3, 5, 6}) {
		t.Fatalf("the table holds ids %v, want [1 3 5 6]: rows 1 and 3 of the file deleted by position, key 3's equality delete of the same snapshot not applied", got)
	}
	if files, err := describeTable(ctx, w.load("db.cdc")); err != nil || files.deletes != 2 {
		t.Fatalf("%d delete files (%v), want 2", files.deletes, err)
	}
}
