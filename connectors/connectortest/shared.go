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

// TestSharedSink runs the scenario of a sink that several copies of a pipeline write (one
// consumer group, component.Reloader), driven as the runner drives it around hand-overs
// (docs/scaling.md): a partition handed over resumes at the offset of the last commit that
// covered it, whichever copy made it, never at an offset another copy only carried. Copy c
// starts after a committed partition 0 and carries a's offset for it in every commit (as the
// runner's view of the sink does since c's start); a moves partition 0 further, hands it
// over and commits other partitions; copy b, given partition 0, must start where a left it.
func TestSharedSink(t *testing.T, target SinkTarget) {
	const lanes = 2
	ctx := context.Background()
	pipeline := fmt.Sprintf("shared-%d", time.Now().UnixNano())
	open := func(instance string) component.Sink {
		t.Helper()
		s := target.New(t)
		info := component.SinkInfo{Pipeline: pipeline, Lanes: lanes, Instance: instance, Shared: true}
		if _, err := s.Open(ctx, info); err != nil {
			t.Fatalf("open copy %s: %v", instance, err)
		}
		t.Cleanup(func() { _ = s.Close(ctx) })
		return s
	}
	// epoch writes rows ids [id, id+n) from partition p at offsets [at, at+n), flushes and
	// commits them with next and from (the runner's view of the sink before and after).
	epoch := func(s component.Sink, e uint64, p int32, id, at, n int64, next, from schemas.Offsets) {
		t.Helper()
		for i := range n {
			b := &schemas.Batch{Schema: Schema, Rows: []schemas.Row{{id + i, "row"}},
				Pos: []schemas.Position{{Source: source, Partition: p, Offset: at + i}}, Time: []time.Time{time.Unix(id+i, 0)}}
			if err := s.Writer(int(i)%lanes).Write(ctx, b); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		Driver{T: t, Lanes: lanes}.Flush(s, e)
		cp := component.Commit{Checkpoint: component.Checkpoint{Pipeline: pipeline, Epoch: e, Next: next}, From: from}
		if err := s.Commit(ctx, cp); err != nil {
			t.Fatalf("commit epoch %d: %v", e, err)
		}
	}
	offsets := func(parts ...int64) schemas.Offsets {
		o := schemas.Offsets{}
		for i := 0; i < len(parts); i += 2 {
			o.Set(source, int32(parts[i]), parts[i+1])
		}
		return o
	}
	reload := func(s component.Sink) schemas.Offsets {
		t.Helper()
		cp, err := s.(component.Reloader).Reload(ctx)
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if cp == nil {
			return nil
		}
		return cp.Next
	}

	a := open("a")
	epoch(a, 1, 0, 0, 0, 10, offsets(0, 10), nil) // a owns partition 0
	c := open("c")
	if got := reload(c); !got.Equal(offsets(0, 10)) {
		t.Fatalf("copy c reloaded %v, want partition 0 at 10", got)
	}
	// c owns partition 1 and carries partition 0 at 10, where it found it.
	epoch(c, 1, 1, 100, 0, 5, offsets(0, 10, 1, 5), offsets(0, 10))
	epoch(a, 2, 0, 10, 10, 10, offsets(0, 20), offsets(0, 10))
	// a hands partition 0 over (the runner forgets it) and goes on with partition 2.
	epoch(a, 3, 2, 200, 0, 3, offsets(2, 3), nil)
	b := open("b")
	if got, want := reload(b), offsets(0, 20, 1, 5, 2, 3); !got.Equal(want) {
		t.Errorf("copy b, given partition 0 after a handed it over, reloaded %v, want %v: partition 0 resumes where a's last commit left it", got, want)
	}
	epoch(b, 1, 0, 20, 20, 5, offsets(0, 25), offsets(0, 20))
	// c stops and starts again (a new run of the copy): what it reloads holds b's commit.
	_ = c.Close(ctx)
	c = open("c")
	if got, want := reload(c), offsets(0, 25, 1, 5, 2, 3); !got.Equal(want) {
		t.Errorf("copy c, started again, reloaded %v, want %v", got, want)
	}
	got := target.Visible(t)
	slices.Sort(got)
	want := slices.Concat(seq(0, 25), seq(100, 105), seq(200, 203))
	if !slices.Equal(got, want) {
		t.Errorf("visible ids %v, want %v", got, want)
	}
}

// seq returns the ids [from, to).
func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
