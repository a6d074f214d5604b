package iceberg

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// appendOther appends rows with ids [from, to) to the table through its own catalog handle,
// as another program would.
func appendOther(ctx context.Context, cat catalog.Catalog, tableName string, from, to int64) error {
	ident, _ := identifier(tableName)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	return appendRows(ctx, tbl, from, to)
}

// appendRows appends rows with ids [from, to) to tbl as it was loaded.
func appendRows(ctx context.Context, tbl *table.Table, from, to int64) error {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	for id := from; id < to; id++ {
		rb.Field(0).(*array.Int64Builder).Append(id)
		rb.Field(1).(*array.StringBuilder).Append("other")
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	_, err = tbl.AppendTable(ctx, at, 1000, nil)
	return err
}

// TestConcurrentWriter: another writer appends to the table every few tens of milliseconds
// while the sink commits epochs; the sink never fails, and every row of both is in the table
// once.
func TestConcurrentWriter(t *testing.T) { concurrentWriter(t, newWarehouse(t)) }

func concurrentWriter(t *testing.T, w warehouse) {
	h := harness{t: t, pipeline: "concurrent", lanes: 2}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.conc")
	h.open(s, "")
	defer s.Close(ctx)

	done := make(chan struct{})
	var other []int64 // ids the other writer committed
	var otherFailures int
	cat := w.catalog() // a handle of its own, with its own connections
	var wg sync.WaitGroup
	wg.Go(func() {
		next := int64(1_000_000)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(20+rand.IntN(60)) * time.Millisecond):
			}
			if err := appendOther(ctx, cat, "db.conc", next, next+5); err != nil {
				otherFailures++ // iceberg-go reports some conflicts as plain errors; try again
				continue
			}
			for id := next; id < next+5; id++ {
				other = append(other, id)
			}
			next += 5
		}
	})

	const epochs, per = 20, 30
	for e := range epochs {
		h.write(s, connectortest.Schema, 0, e*per, (e+1)*per, idRow)
		h.flush(s, uint64(e+1))
		if err := s.Commit(ctx, h.driver().Checkpoint(uint64(e+1), (e+1)*per)); err != nil {
			close(done)
			wg.Wait()
			t.Fatalf("commit of epoch %d failed beside another writer: %v", e+1, err)
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
	}
	close(done)
	wg.Wait()
	t.Logf("sink commit retries: %d; other writer: %d rows committed, %d failed appends", s.retries.Load(), len(other), otherFailures)

	got := sorted(w.ids("db.conc"))
	want := sorted(append(seq(0, epochs*per), other...))
	if !slices.Equal(got, want) {
		t.Fatalf("table holds %d ids, want %d (the sink's 0..%d and the other writer's, once each)", len(got), len(want), epochs*per-1)
	}
	if cp, err := s.Reload(ctx); err != nil || cp.Epoch != epochs {
		t.Fatalf("checkpoint %+v, %v; want epoch %d", cp, err, epochs)
	}
}
