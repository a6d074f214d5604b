package iceberg

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// TestRoutedSharedSink runs the shared-sink suite (copies handing partitions over) on a
// routed sink: every copy's own record sits in its complete marks.
func TestRoutedSharedSink(t *testing.T) {
	w := newWarehouse(t)
	connectortest.TestSharedSink(t, connectortest.SinkTarget{
		Delivery: component.ExactlyOnce,
		New:      func(t *testing.T) component.Sink { return w.build(connectortest.Schema, "db.shared_{name}") },
		Visible:  func(t *testing.T) []int64 { return w.ids("db.shared_row") },
	})
}

// TestRoutingCopies: two copies write routed tables, hand partitions over, and each meets a
// zombie of the other: one whose commit comes after the new owner's (refused), and one whose
// commit comes first (the new owner's commit is refused, and its next run drops what the
// zombie wrote); a partition comes back to a copy that carried it at an older offset. Every
// table must hold each row once.
func TestRoutingCopies(t *testing.T) {
	ctx := context.Background()
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "copies", lanes: 2}
	build := func() *sink { return w.build(routeSchema, "db.events_{country}", "drop: [country]") }
	row := func(p int32) func(int) schemas.Row {
		return func(i int) schemas.Row { return schemas.Row{int64(p)*1000 + int64(i), "n", country(i)} }
	}
	off := func(kv ...int64) schemas.Offsets {
		o := schemas.Offsets{}
		for i := 0; i < len(kv); i += 2 {
			o.Set(testSource, int32(kv[i]), kv[i+1])
		}
		return o
	}
	// epoch writes partition p's rows [from, to) into s and commits them as epoch e; next and
	// prev are the copy's whole view after and before (the runner's Next and From).
	epoch := func(s *sink, e uint64, p int32, from, to int, next, prev schemas.Offsets) error {
		t.Helper()
		h.write(s, routeSchema, p, from, to, row(p))
		h.flush(s, e)
		return s.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: h.pipeline, Epoch: e, Next: next}, From: prev})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	conflict := func(err error, what string) {
		t.Helper()
		var c *OffsetConflictError
		if !errors.As(err, &c) {
			t.Fatalf("%s: got %v, want an offset conflict", what, err)
		}
	}
	reload := func(s *sink) schemas.Offsets {
		t.Helper()
		cp, err := s.Reload(ctx)
		must(err)
		return cp.Next
	}

	a, b := build(), build()
	h.open(a, "a")
	h.open(b, "b")
	defer func() { a.Close(ctx); b.Close(ctx) }()
	must(epoch(a, 1, 0, 0, 30, off(0, 30), off(0, 0))) // a owns partition 0
	must(epoch(b, 1, 1, 0, 20, off(1, 20), off(1, 0))) // b owns partition 1
	must(epoch(a, 2, 0, 30, 45, off(0, 45), off(0, 30)))

	// Partition 0 goes to b at a's last commit; rows from 60 on also name a new table.
	if got := reload(b); !got.Equal(off(0, 45, 1, 20)) {
		t.Fatalf("b reloaded %v, want partition 0 at 45 and 1 at 20", got)
	}
	must(epoch(b, 2, 0, 45, 70, off(0, 70, 1, 20), off(0, 45, 1, 20)))
	// a, a zombie that missed the hand-over, commits partition 0 after b: refused.
	conflict(epoch(a, 3, 0, 45, 60, off(0, 60), off(0, 45)), "a's commit of a partition b took")

	// Partition 1 goes to a; b, a zombie this time, commits it before a does.
	if got := reload(a); !got.Equal(off(0, 70, 1, 20)) {
		t.Fatalf("a reloaded %v, want partition 0 at 70 and 1 at 20", got)
	}
	h.write(a, routeSchema, 1, 20, 50, row(1))
	must(epoch(b, 3, 1, 20, 40, off(0, 70, 1, 40), off(0, 70, 1, 20)))
	h.flush(a, 4)
	err := a.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: h.pipeline, Epoch: 4, Next: off(1, 50)}, From: off(1, 20)})
	conflict(err, "a's commit after b's zombie commit")
	// a stops with the error; its next run resumes where the zombie's commit left partition 1.
	a.Close(ctx)
	a = build()
	cp := h.open(a, "a")
	if cp == nil || !cp.Next.Equal(off(0, 70, 1, 40)) {
		t.Fatalf("a reopened at %+v, want partition 0 at 70 and 1 at 40", cp)
	}
	must(epoch(a, cp.Epoch+1, 1, 40, 50, off(0, 70, 1, 50), off(0, 70, 1, 40)))

	// Partition 1 goes back to b, whose last commit carried it at 40: b takes what the tables
	// hold now, commits an epoch that does not move it, then one that does.
	if got := reload(b); !got.Equal(off(0, 70, 1, 50)) {
		t.Fatalf("b reloaded %v, want partition 0 at 70 and 1 at 50", got)
	}
	h.flush(b, 4)
	must(b.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: h.pipeline, Epoch: 4, Next: off(0, 70, 1, 50)}, From: off(0, 70, 1, 50)}))
	must(epoch(b, 5, 1, 50, 60, off(0, 70, 1, 60), off(0, 70, 1, 50)))

	want := map[string][]int64{}
	for p, n := range map[int32]int{0: 70, 1: 60} {
		for i := range n {
			want[countryTable(i)] = append(want[countryTable(i)], int64(p)*1000+int64(i))
		}
	}
	for name, ids := range want {
		if got := sorted(w.ids(name)); !slices.Equal(got, sorted(ids)) {
			t.Errorf("table %s holds ids %v, want %v (each once)", name, got, sorted(ids))
		}
	}
	c := build()
	defer c.Close(ctx)
	if cp := h.open(c, "c"); cp == nil || !cp.Next.Equal(off(0, 70, 1, 60)) {
		t.Errorf("a new copy c opened at %+v, want partition 0 at 70 and 1 at 60", cp)
	}
}

// TestRoutingZombieBetweenReloads: copy b is given partition 0 and writes rows of it; a, a
// zombie, commits the same rows to its first table and dies; then another rebalance has b
// reload before it commits. b's commit must still be refused (it expects what the tables
// held when it got the partition, not after the zombie's commit, since its writers did not
// drop the zombie's rows), and its next run drops what the zombie wrote.
func TestRoutingZombieBetweenReloads(t *testing.T) {
	ctx := context.Background()
	w, h, build, commit := twoCopies(t, "zombie")
	a, b := build(), build()
	h.open(a, "a")
	h.open(b, "b")
	defer func() { a.Close(ctx); b.Close(ctx) }()
	h.write(a, routeSchema, 0, 0, 30, countryRow)
	if err := commit(a, 1, 30, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reload(ctx); err != nil { // b is given partition 0 at 30
		t.Fatal(err)
	}
	h.write(b, routeSchema, 0, 30, 45, countryRow)
	// The zombie's commit comes first, and a dies after its first table: the epoch is not
	// complete, so the checkpoint still starts partition 0 at 30.
	h.write(a, routeSchema, 0, 30, 40, countryRow)
	a.hook = func(step string) error {
		if step == stepSent {
			return errors.New("crash")
		}
		return nil
	}
	if err := commit(a, 2, 40, 30); err == nil {
		t.Fatal("the zombie's crashed commit succeeded")
	}
	if _, err := b.Reload(ctx); err != nil { // another rebalance
		t.Fatal(err)
	}
	var conflict *OffsetConflictError
	if err := commit(b, 1, 45, 30); !errors.As(err, &conflict) {
		t.Fatalf("b's commit after the zombie's: got %v, want an offset conflict", err)
	}
	b.Close(ctx)
	b = build()
	cp := h.open(b, "b")
	if cp == nil || cp.Next[testSource][0] != 30 {
		t.Fatalf("b reopened at %+v, want partition 0 at 30", cp)
	}
	h.write(b, routeSchema, 0, 30, 45, countryRow) // the first table drops what a wrote
	if err := commit(b, cp.Epoch+1, 45, 30); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, w, 45)
}

// TestRoutingPartialEpochHandOver: copy a dies after the first table of an epoch, so that
// table is ahead of a's complete mark; b, which reloaded before and reloads again when it is
// given the partition, writes from the mark on. Its commit must go through (no false
// conflict with the partial epoch), and every table hold each row once.
func TestRoutingPartialEpochHandOver(t *testing.T) {
	ctx := context.Background()
	w, h, build, commit := twoCopies(t, "partial")
	a, b := build(), build()
	h.open(a, "a")
	h.open(b, "b")
	defer func() { a.Close(ctx); b.Close(ctx) }()
	h.write(a, routeSchema, 0, 0, 30, countryRow)
	if err := commit(a, 1, 30, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reload(ctx); err != nil { // a rebalance that gives b other partitions
		t.Fatal(err)
	}
	h.write(a, routeSchema, 0, 30, 45, countryRow)
	a.hook = func(step string) error {
		if step == stepSent {
			return errors.New("crash")
		}
		return nil
	}
	if err := commit(a, 2, 45, 30); err == nil {
		t.Fatal("a's crashed commit succeeded")
	}
	cp, err := b.Reload(ctx) // a's session expires: b is given partition 0
	if err != nil {
		t.Fatal(err)
	}
	if got := cp.Next[testSource][0]; got != 30 {
		t.Fatalf("b reloaded partition 0 at %d, want a's complete mark at 30", got)
	}
	h.write(b, routeSchema, 0, 30, 60, countryRow) // the first table drops what a wrote
	if err := commit(b, 1, 60, 30); err != nil {
		t.Fatalf("b's commit after a's partial epoch: %v", err)
	}
	checkRouted(t, w, 60)
}

// twoCopies is the warehouse, harness and routed sinks of a test of copies writing partition 0:
// build makes a copy's sink, commit flushes and commits its epoch e from one offset to another.
func twoCopies(t *testing.T, pipeline string) (warehouse, harness, func() *sink, func(s *sink, e uint64, next, from int64) error) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: pipeline, lanes: 2}
	build := func() *sink { return w.build(routeSchema, "db.events_{country}", "drop: [country]") }
	off := func(next int64) schemas.Offsets { return schemas.Offsets{testSource: {0: next}} }
	commit := func(s *sink, e uint64, next, from int64) error {
		h.flush(s, e)
		return s.Commit(context.Background(), component.Commit{Checkpoint: component.Checkpoint{Pipeline: h.pipeline, Epoch: e, Next: off(next)}, From: off(from)})
	}
	return w, h, build, commit
}
