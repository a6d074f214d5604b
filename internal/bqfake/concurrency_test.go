package bqfake

import (
	"fmt"
	"sync"
	"testing"

	"cloud.google.com/go/bigquery/storage/managedwriter"
)

// Writers on PENDING streams and the _default stream run at once with readers; every
// committed row arrives exactly once. Run with -race.
func TestConcurrentWriters(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	const writers, appends = 4, 20
	var wg sync.WaitGroup
	names := make([]string, writers)
	errs := make(chan error, 2*writers+1)
	ctx := testCtx(t)
	for w := range writers {
		pending := e.stream(t, "events", managedwriter.PendingStream, c)
		def := e.stream(t, "events", managedwriter.DefaultStream, c)
		names[w] = pending.StreamName()
		rows := make([][][]byte, appends)
		for i := range rows {
			rows[i] = c.rows(t, fmt.Sprintf(`{"id": %d}`, w*1000+i))
		}
		wg.Go(func() {
			for i, row := range rows {
				res, err := pending.AppendRows(ctx, row, managedwriter.WithOffset(int64(i)))
				if err == nil {
					_, err = res.GetResult(ctx)
				}
				if err == nil {
					res, err = def.AppendRows(ctx, row)
				}
				if err == nil {
					_, err = res.GetResult(ctx)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			if _, err := pending.Finalize(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := e.srv.Rows(testProject, testDataset, "events"); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if resp := e.commit(t, "events", names...); resp.GetCommitTime() == nil {
		t.Fatalf("commit: %v", resp.GetStreamErrors())
	}
	seen := map[int64]int{}
	for _, r := range e.rows(t, "events") {
		seen[r["id"].(int64)]++
	}
	for w := range writers {
		for i := range appends {
			if n := seen[int64(w*1000+i)]; n != 2 {
				t.Errorf("id %d arrived %d times, want 2 (pending + _default)", w*1000+i, n)
			}
		}
	}
}
