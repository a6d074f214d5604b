package iceberg

import (
	"context"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

func (h harness) driver() connectortest.Driver {
	return connectortest.Driver{T: h.t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
}

func snapshots(w warehouse, tableName string) int {
	return len(w.load(tableName).Metadata().Snapshots())
}

// TestRecovery: a reopened sink returns its last checkpoint, a repeated commit of an old
// epoch changes nothing, and files flushed but not committed are not in the table.
func TestRecovery(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "recovery", lanes: 2}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.rec")
	h.open(s, "")
	for e := range 3 {
		h.write(s, connectortest.Schema, 0, e*10, e*10+10, idRow)
		h.flush(s, uint64(e+1))
		h.driver().Commit(s, uint64(e+1), e*10+10)
	}
	h.write(s, connectortest.Schema, 0, 30, 40, idRow)
	h.flush(s, 4) // never committed
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s = w.build(connectortest.Schema, "db.rec")
	cp := h.open(s, "")
	defer s.Close(ctx)
	if cp == nil || cp.Epoch != 3 || cp.Pipeline != "recovery" || !cp.Next.Equal(schemas.Offsets{testSource: {0: 30}}) {
		t.Fatalf("reopened checkpoint %+v, want epoch 3 at offset 30", cp)
	}
	if got := sorted(w.ids("db.rec")); !slices.Equal(got, seq(0, 30)) {
		t.Fatalf("visible ids %v, want 0..29", got)
	}
	before := snapshots(w, "db.rec")
	h.driver().Commit(s, 2, 20) // an old epoch again, as after a crash
	h.driver().Commit(s, 3, 30)
	if after := snapshots(w, "db.rec"); after != before {
		t.Fatalf("repeating committed epochs made %d snapshots", after-before)
	}

	// An epoch that moved offsets without rows (all filtered out) still records them.
	h.flush(s, 4)
	h.driver().Commit(s, 4, 35)
	if cp, err := s.Reload(ctx); err != nil || cp.Epoch != 4 || cp.Next[testSource][0] != 35 {
		t.Fatalf("after an empty epoch: checkpoint %+v, %v", cp, err)
	}
	if got := w.ids("db.rec"); len(got) != 30 {
		t.Fatalf("%d rows after an empty epoch, want 30", len(got))
	}
}

// TestCrashPoints stops Commit at each step as a crash would, reopens, replays what the
// checkpoint does not cover, and checks that every row is in the table once.
func TestCrashPoints(t *testing.T) {
	for _, c := range []struct {
		step      string
		committed bool // whether the crashed epoch is in the table
	}{
		{stepBefore, false},
		{stepSent, true},
	} {
		t.Run(c.step, func(t *testing.T) {
			w := newWarehouse(t)
			h := harness{t: t, pipeline: "crash", lanes: 2}
			ctx := context.Background()
			s := w.build(connectortest.Schema, "db.crash")
			h.open(s, "")
			h.write(s, connectortest.Schema, 0, 0, 10, idRow)
			h.flush(s, 1)
			h.driver().Commit(s, 1, 10)
			h.write(s, connectortest.Schema, 0, 10, 20, idRow)
			h.flush(s, 2)
			s.hook = func(step string) error {
				if step == c.step {
					return errors.New("crash")
				}
				return nil
			}
			if err := s.Commit(ctx, h.driver().Checkpoint(2, 20)); err == nil {
				t.Fatal("the crashed commit succeeded")
			}
			s.Close(ctx)

			s = w.build(connectortest.Schema, "db.crash")
			cp := h.open(s, "")
			defer s.Close(ctx)
			want := uint64(1)
			if c.committed {
				want = 2
			}
			if cp == nil || cp.Epoch != want {
				t.Fatalf("after the crash: checkpoint %+v, want epoch %d", cp, want)
			}
			// The runner replays what the checkpoint does not cover.
			from := int(cp.Next[testSource][0])
			h.write(s, connectortest.Schema, 0, from, 30, idRow)
			h.flush(s, want+1)
			h.driver().Commit(s, want+1, 30)
			if got := sorted(w.ids("db.crash")); !slices.Equal(got, seq(0, 30)) {
				t.Fatalf("ids %v, want 0..29 once each", got)
			}
		})
	}
}

// TestLostReply: a commit whose reply is lost is found in the table's history instead of
// being sent twice.
func TestLostReply(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "lost", lanes: 1}
	s := w.build(connectortest.Schema, "db.lost")
	h.open(s, "")
	defer s.Close(context.Background())
	lost := 0
	s.hook = func(step string) error {
		if step == stepSent && lost == 0 {
			lost++
			return errLostReply
		}
		return nil
	}
	h.write(s, connectortest.Schema, 0, 0, 10, idRow)
	h.flush(s, 1)
	h.driver().Commit(s, 1, 10)
	if got := sorted(w.ids("db.lost")); !slices.Equal(got, seq(0, 10)) {
		t.Fatalf("ids %v, want 0..9 once each", got)
	}
	if n := snapshots(w, "db.lost"); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
}

// TestCompareAndSet: of two copies of a pipeline, the one whose epoch starts behind the
// table's offsets of a partition cannot commit it, and its files stay out of the table.
func TestCompareAndSet(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "cas", lanes: 1}
	ctx := context.Background()
	a, b := w.build(connectortest.Schema, "db.cas"), w.build(connectortest.Schema, "db.cas")
	h.open(a, "a")
	h.open(b, "b")
	defer a.Close(ctx)
	defer b.Close(ctx)
	cp := func(epoch uint64, from, next schemas.Offsets) component.Commit {
		return component.Commit{Checkpoint: component.Checkpoint{Pipeline: h.pipeline, Epoch: epoch, Next: next}, From: from}
	}

	// a takes partition 0 from the start to 10; b has partition 1.
	h.write(a, connectortest.Schema, 0, 0, 10, idRow)
	h.flush(a, 1)
	if err := a.Commit(ctx, cp(1, schemas.Offsets{}, schemas.Offsets{testSource: {0: 10}})); err != nil {
		t.Fatal(err)
	}
	h.write(b, connectortest.Schema, 1, 100, 105, idRow)
	h.flush(b, 1)
	if err := b.Commit(ctx, cp(1, schemas.Offsets{}, schemas.Offsets{testSource: {1: 105}})); err != nil {
		t.Fatal(err)
	}
	// The partitions are merged into one map.
	if got, err := a.Reload(ctx); err != nil || !got.Next.Equal(schemas.Offsets{testSource: {0: 10, 1: 105}}) {
		t.Fatalf("merged checkpoint %+v, %v", got, err)
	}

	// b, stale, believes it still owns partition 0 from its start.
	h.write(b, connectortest.Schema, 0, 1000, 1010, idRow)
	h.flush(b, 2)
	err := b.Commit(ctx, cp(2, schemas.Offsets{testSource: {1: 105}}, schemas.Offsets{testSource: {0: 1010, 1: 105}}))
	var conflict *OffsetConflictError
	if !errors.As(err, &conflict) || conflict.Partition != 0 || conflict.Have != 10 || conflict.Want != -1 {
		t.Fatalf("stale commit: err = %v, want a conflict on partition 0", err)
	}
	if !strings.Contains(err.Error(), "another copy of the pipeline took the partition") {
		t.Errorf("message: %v", err)
	}
	if got := sorted(w.ids("db.cas")); !slices.Equal(got, append(seq(0, 10), seq(100, 105)...)) {
		t.Fatalf("ids %v: the stale copy's rows must not be in the table", got)
	}

	// a goes on from where the table has partition 0; partitions it does not move are not
	// checked and keep b's offsets.
	h.write(a, connectortest.Schema, 0, 10, 20, idRow)
	h.flush(a, 2)
	if err := a.Commit(ctx, cp(2, schemas.Offsets{testSource: {0: 10, 1: 0}}, schemas.Offsets{testSource: {0: 20, 1: 0}})); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Reload(ctx); !got.Next.Equal(schemas.Offsets{testSource: {0: 20, 1: 105}}) {
		t.Fatalf("merged checkpoint %v", got.Next)
	}
}

func TestFileSizes(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "sizes", lanes: 1}
	s := w.build(connectortest.Schema, "db.sizes", `table_properties: {write.target-file-size-bytes: "65536"}`)
	h.open(s, "")
	defer s.Close(context.Background())
	rnd := rand.New(rand.NewPCG(1, 2))
	const n = 5000 // about 1 MB of random text
	for from := 0; from < n; from += 500 {
		h.write(s, connectortest.Schema, 0, from, from+500, func(i int) schemas.Row {
			b := make([]byte, 150)
			for j := range b {
				b[j] = byte(rnd.Uint32())
			}
			return schemas.Row{int64(i), base64.StdEncoding.EncodeToString(b)}
		})
	}
	h.flush(s, 1)
	h.driver().Commit(s, 1, n)
	tasks, err := w.load("db.sizes").Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files for about 1 MB", len(tasks))
	if len(tasks) < 3 {
		t.Fatalf("%d files, want the lane's output rolled at 64 KiB", len(tasks))
	}
	var rows int64
	for _, task := range tasks {
		rows += task.File.Count()
		if size := task.File.FileSizeBytes(); size > 4*65536 {
			t.Errorf("file %s has %d bytes, far over the 64 KiB target", task.File.FilePath(), size)
		}
	}
	if rows != n {
		t.Fatalf("%d rows in the files, want %d", rows, n)
	}
}
