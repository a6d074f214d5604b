package combine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

const rep = "kafka:rep"

// splitCopy is one copy's Combine (count per user, fixed 10 s windows) split by the
// partitions of rep.
func splitCopy(t *testing.T) component.Keyed {
	t.Helper()
	p := mustBuild(t, "Combine", "config: {group_by: user, combine: {n: {value: n, fn: count}}}", clicks)
	st := NewStatefulOver(&component.Context{Name: "step", Inputs: []component.Input{{Name: "in", Schema: clicks}}},
		p, window.Fixed(10*time.Second, 0), 0)
	k, ok := st.(component.Keyed)
	if !ok {
		t.Fatal("a Combine is not component.Keyed")
	}
	k.SplitBy(rep)
	return k
}

// repBatch is clicks read back from partition part of rep at offsets from, first read from
// partition origin of the source.
func repBatch(part int32, from int64, origin int32, cs ...click) *schemas.Batch {
	b := batchOf(cs...)
	for i := range b.Pos {
		b.Pos[i] = schemas.Position{Source: rep, Partition: part, Offset: from + int64(i)}
		b.Origin = append(b.Origin, schemas.Position{Source: "kafka:in", Partition: origin, Offset: int64(i)})
	}
	return b
}

// fired fires k and returns its results as "partition offset user n" lines.
func fired(t *testing.T, k component.Keyed, upstream schemas.Offsets, final bool) string {
	t.Helper()
	var lines []string
	err := k.Fire(ctx, upstream, final, func(_ string, b *schemas.Batch) error {
		for i, r := range b.Rows {
			lines = append(lines, fmt.Sprintf("p%d@%d %v=%v", b.Pos[i].Partition, b.Pos[i].Offset, r[0], r[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, " ")
}

// A partition's task moves between copies through a snapshot: the copy that takes the
// partition over continues its windows, and each task's watermark follows the source
// partitions its rows came from, not the other tasks'.
func TestSplitTasksHandOver(t *testing.T) {
	a, b := splitCopy(t), splitCopy(t)
	for _, in := range []struct {
		part int32
		b    *schemas.Batch
	}{
		{0, repBatch(0, 0, 0, click{"ann", int64(1), 1, 1}, click{"ann", int64(1), 1, 2})},
		{1, repBatch(1, 0, 0, click{"bob", int64(1), 1, 3})},
		{1, repBatch(1, 1, 1, click{"bob", int64(1), 1, 4})},
	} {
		if err := a.Process(ctx, 0, in.b, noEmit(t)); err != nil {
			t.Fatal(err)
		}
	}
	// In partition 0 both source partitions passed 10 s, so its window [0, 10) closes;
	// partition 1 has seen source partition 1 only at 4 s.
	for i, origin := range []int32{0, 1} {
		if err := a.Process(ctx, 0, repBatch(0, int64(2+i), origin, click{"ann", int64(1), 1, 12}), noEmit(t)); err != nil {
			t.Fatal(err)
		}
	}
	if got := fired(t, a, schemas.Offsets{rep: {0: 4, 1: 2}}, false); got != "p0@10000 ann=2" {
		t.Errorf("copy a fired %q, want ann's first window in partition 0 only", got)
	}
	a.Revoke([]int32{1})
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := a.Tasks(snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(tasks)); !slices.Equal(got, []int32{0, 1}) || tasks[1].Next != 2 || tasks[0].Fired != 10001 {
		t.Fatalf("the snapshot's tasks: %v (partition 1 at %d, partition 0 fired %d); want the revoked partition 1 kept at 2", got, tasks[1].Next, tasks[0].Fired)
	}
	// Copy b takes partition 1 over and goes on where copy a stopped.
	task := tasks[1]
	if err := b.Adopt(1, &task); err != nil {
		t.Fatal(err)
	}
	if err := b.Process(ctx, 0, repBatch(1, 2, 1, click{"bob", int64(1), 1, 5}), noEmit(t)); err != nil {
		t.Fatal(err)
	}
	if got := fired(t, b, schemas.Offsets{rep: {1: 3}}, true); got != "p1@10000 bob=3" {
		t.Errorf("copy b fired %q, want bob's window with copy a's two records and its own", got)
	}
	if got := b.Fired(); !got.Equal(schemas.Offsets{"window:step": {1: 10001}}) {
		t.Errorf("copy b's fired offsets %v", got)
	}
	if _, err := b.Tasks([]byte("SLWS1...")); err == nil || !strings.Contains(err.Error(), "one copy") {
		t.Errorf("a single-copy state read as tasks: %v", err)
	}
}
