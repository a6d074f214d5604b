package iceberg

import (
	"context"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// TestPartitionedLanesShareFiles: the lanes of a partitioned table write one file per
// partition and epoch, not one per lane and partition, and the rows a lane writes after
// flushing an epoch belong to the next one, also while another lane has not flushed it yet.
func TestPartitionedLanesShareFiles(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "shared", lanes: 2}
	s := w.build(connectortest.Schema, "db.events", `partition_fields: ["bucket(id, 4)"]`)
	h.open(s, "")
	defer s.Close(context.Background())

	h.write(s, connectortest.Schema, 0, 0, 200, idRow)
	h.flush(s, 1)
	h.driver().Commit(s, 1, 200)
	if got := dataFiles(t, w); got != 4 {
		t.Errorf("epoch 1 of 2 lanes into 4 buckets wrote %d data files, want 4", got)
	}

	// Epoch 2: lane 0 flushes first and goes on writing rows of epoch 3 while lane 1 still
	// writes rows of epoch 2.
	one := func(lane, from, to int) {
		t.Helper()
		b := &schemas.Batch{Schema: connectortest.Schema}
		for i := from; i < to; i++ {
			b.Rows = append(b.Rows, idRow(i))
			b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
		}
		if err := s.Writer(lane).Write(context.Background(), b); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	flush := func(lane int, epoch uint64) {
		t.Helper()
		if err := s.Writer(lane).Flush(context.Background(), epoch); err != nil {
			t.Fatalf("lane %d flushes epoch %d: %v", lane, epoch, err)
		}
	}
	one(0, 200, 250)
	flush(0, 2)
	one(0, 300, 350) // epoch 3
	one(1, 250, 300) // epoch 2
	flush(1, 2)
	h.driver().Commit(s, 2, 300)
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 300)) {
		t.Fatalf("after epoch 2 the table holds %d rows, want ids 0-299", len(got))
	}
	h.flush(s, 3)
	h.driver().Commit(s, 3, 350)
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 350)) {
		t.Fatalf("after epoch 3 the table holds %d rows, want ids 0-349", len(got))
	}
	if got := dataFiles(t, w); got > 12 {
		t.Errorf("3 epochs into 4 buckets wrote %d data files, want at most 12", got)
	}
}

// dataFiles counts the data files of db.events.
func dataFiles(t *testing.T, w warehouse) int {
	t.Helper()
	tasks, err := w.load("db.events").Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks)
}

// TestSharedRunOfLateTable: a routed, partitioned table that a lane first writes to after the
// other lane flushed the epoch still ends its run with that flush: its rows are committed.
func TestSharedRunOfLateTable(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "late", lanes: 2}
	s := w.build(routeSchema, "db.events_{country}", `partition_fields: ["bucket(id, 2)"]`)
	h.open(s, "")
	defer s.Close(context.Background())
	if err := s.Writer(0).Flush(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	b := &schemas.Batch{Schema: routeSchema}
	for i := range 10 {
		b.Rows = append(b.Rows, schemas.Row{int64(i), "n", "late"})
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	if err := s.Writer(1).Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.Writer(1).Flush(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	h.driver().Commit(s, 1, 10)
	if got := sorted(w.ids("db.events_late")); !slices.Equal(got, seq(0, 10)) {
		t.Fatalf("db.events_late holds ids %v, want 0-9", got)
	}
}
