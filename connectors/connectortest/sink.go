// Package connectortest holds conformance suites that every connector runs in its own tests,
// as Go's testing/slogtest does for handlers: one definition of what a sink must do.
package connectortest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Schema is the schema of the rows the suites write: {id integer, name string}.
var Schema = schemas.New(
	schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
	schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}},
)

// source names the partition the suites' rows come from.
const source = "test:conformance"

// SinkTarget is a sink under test and a way to see what it committed.
type SinkTarget struct {
	// New builds a new instance of the same sink (as a restarted process would), for rows of
	// Schema.
	New func(t *testing.T) component.Sink
	// Visible returns the ids of the rows a reader of the sink's output sees now.
	Visible func(t *testing.T) []int64
	// Delivery is the guarantee New builds the sink with (component.Options.Delivery): what
	// the suite expects of it.
	Delivery component.Delivery
}

// TestSink runs the sink conformance scenarios: nothing is visible before its epoch commits
// (exactly_once), a commit makes the epoch visible together with its checkpoint, a sink
// dropped between flush and commit (a crash) comes back at its last checkpoint, and the epoch
// replayed after it is in the output once (exactly_once) or at least once (at_least_once).
func TestSink(t *testing.T, target SinkTarget) {
	const lanes = 2
	ctx := context.Background()
	// A pipeline of its own, so runs on a shared system (a Kafka cluster) do not meet.
	info := component.SinkInfo{Pipeline: fmt.Sprintf("conformance-%d", time.Now().UnixNano()), Lanes: lanes}
	exactly := target.Delivery == component.ExactlyOnce

	open := func() (component.Sink, *component.Checkpoint) {
		t.Helper()
		s := target.New(t)
		cp, err := s.Open(ctx, info)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s, cp
	}
	write := func(s component.Sink, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			b := &schemas.Batch{Schema: Schema, Rows: []schemas.Row{{int64(i), "row"}},
				Pos: []schemas.Position{{Source: source, Offset: int64(i)}}, Time: []time.Time{time.Unix(int64(i), 0)}}
			if err := s.Writer(i%lanes).Write(ctx, b); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	}
	d := Driver{T: t, Pipeline: info.Pipeline, Lanes: lanes, Source: source}
	flush, commit := d.Flush, d.Commit
	check := func(what string, want int) {
		t.Helper()
		got := target.Visible(t)
		slices.Sort(got)
		got = slices.Compact(got)
		if len(got) != want || (want > 0 && (got[0] != 0 || got[len(got)-1] != int64(want-1))) {
			t.Fatalf("%s: visible ids %v, want 0..%d", what, got, want-1)
		}
	}
	once := func(what string) {
		t.Helper()
		got := target.Visible(t)
		if exactly && len(got) != len(slices.Compact(slices.Sorted(slices.Values(got)))) {
			t.Fatalf("%s: ids written twice: %v", what, got)
		}
	}

	s, cp := open()
	if cp != nil {
		t.Fatalf("a new sink returned checkpoint %+v", cp)
	}
	write(s, 0, 10)
	flush(s, 1)
	if exactly {
		check("after flush, before commit", 0)
	}
	commit(s, 1, 10)
	check("after commit", 10)
	if m, ok := s.(component.Measured); ok {
		// sluice_sink_bytes_total: a sink that counts what it wrote has counted these rows.
		if _, bytes := m.Written(); bytes <= 0 {
			t.Errorf("after writing and committing 10 rows, Written() counts %d bytes", bytes)
		}
	}
	commit(s, 1, 10) // again, as after a crash: nothing changes
	check("after committing the same epoch again", 10)
	once("after committing the same epoch again")

	write(s, 10, 20)
	flush(s, 2)
	if err := s.Close(ctx); err != nil { // a crash before the commit of epoch 2
		t.Fatalf("close: %v", err)
	}
	s, cp = open()
	if cp == nil || cp.Epoch != 1 || cp.Next[source][0] != 10 {
		t.Fatalf("after a crash before commit: checkpoint %+v, want epoch 1 at offset 10", cp)
	}
	if exactly {
		check("after a crash before commit", 10)
	}
	write(s, 10, 20) // the runner replays the epoch
	flush(s, 2)
	commit(s, 2, 20)
	check("after the replayed epoch", 20)
	once("after the replayed epoch")
	if err := s.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	s, cp = open()
	defer s.Close(ctx)
	if cp == nil || cp.Epoch != 2 {
		t.Fatalf("after a clean stop: checkpoint %+v, want epoch 2", cp)
	}
}
