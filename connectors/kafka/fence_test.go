package kafka

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// An epoch's transaction commits the grouped source's offsets to the group with the copy's
// generation: with the current generation it commits (and the group holds the offsets); with
// a stale one, or none, the group refuses, the epoch is aborted and nothing of it is visible.
func TestGroupFence(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	in := newTopic(t, 1)
	group := "fence-" + in
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, gen := joinGroup(ctx, t, group, in)
	fence := func(gen int32, id string, next int64) []component.GroupFence {
		return []component.GroupFence{{Group: group, MemberID: id, Generation: gen,
			Offsets: schemas.Offsets{sourcePrefix + in: {0: next}}}}
	}

	s, _ := h.open()
	h.write(s, 0, 5)
	h.flush(s, 1)
	cp := h.checkpoint(1, 5)
	cp.Fences = fence(gen, id, 5)
	if err := s.Commit(ctx, cp); err != nil {
		t.Fatalf("commit with the current generation: %v", err)
	}
	h.checkVisible(true, 5)
	offsets, err := kadm.NewClient(testClient(t)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(in, 0); !ok || o.At != 5 {
		t.Errorf("the group's offset after the transaction: %+v, want 5", o)
	}

	for _, stale := range []struct {
		name string
		gen  int32
		id   string
	}{{"stale generation", gen - 1, id}, {"unknown member", gen, "gone"}, {"no membership", -1, ""}} {
		s, _ := h.open() // fences the previous producer, as a restart does
		h.write(s, 5, 8)
		h.flush(s, 2)
		cp := h.checkpoint(2, 8)
		cp.Fences = fence(stale.gen, stale.id, 8)
		if err := s.Commit(ctx, cp); !errors.Is(err, component.ErrFencedCopy) {
			t.Errorf("%s: commit returned %v, want the copy fenced", stale.name, err)
		}
		h.checkVisible(true, 5)
		s.Close(ctx)
	}
}

// joinGroup makes a member of group that consumes topic and returns its member id and
// generation once it joined.
func joinGroup(ctx context.Context, t *testing.T, group, topic string) (string, int32) {
	t.Helper()
	member := testClient(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.SessionTimeout(6*time.Second))
	id, gen := "", int32(-1)
	for id == "" || gen < 0 { // joined once the client knows its generation
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		member.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatal("the member did not join its group")
		}
		id, gen = member.GroupMetadata()
	}
	return id, gen
}

// keepAll is the run's side of a grouped source in TestGroupFenceAcrossARebalance: partitions
// start at their beginning and are handed over at once.
type keepAll struct{}

func (keepAll) Assigned(context.Context, []component.Partition) (schemas.Offsets, error) {
	return nil, nil
}
func (keepAll) Revoked(context.Context, []component.Partition) error { return nil }
func (keepAll) Lost([]component.Partition, error)                    {}

// A rebalance that moves the group's generation while an epoch commits (another copy joins,
// leaves or dies) does not fence a copy that kept the partitions it commits: the offsets are
// committed with the new generation in the same transaction. A partition the copy gave up
// meanwhile stays fenced. Before, the copy took itself for fenced and stopped (exit 3) at the
// very moment the other copy died (TestBigQueryGroupRebalance failed that way).
func TestGroupFenceAcrossARebalance(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	in := newTopic(t, 4)
	group := "rebalance-" + in
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := build(t, "type: ReadFromKafka\nconfig:\n"+config(in, "format: STRING",
		"consumer_config: {group.id: "+group+", session.timeout.ms: '6000'}")).Component.(*source)
	src.SetRebalancer(keepAll{})
	if err := src.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	poll := func(until func() bool, what string) {
		t.Helper()
		for !until() {
			rctx, rcancel := context.WithTimeout(ctx, 50*time.Millisecond)
			_, _ = src.Read(rctx) // drives the group client
			rcancel()
			if ctx.Err() != nil {
				t.Fatalf("%s: not within 30 s", what)
			}
		}
	}
	owned := func() []int32 {
		src.mu.Lock()
		defer src.mu.Unlock()
		var ps []int32
		for p := range src.ownedSince {
			ps = append(ps, p.Partition)
		}
		slices.Sort(ps)
		return ps
	}
	poll(func() bool { return len(owned()) == 4 }, "the copy owning all 4 partitions")
	id, gen := src.Member()

	// A second member joins: the cooperative rebalance moves the generation and takes
	// partitions from the copy, which keeps the others.
	other := testClient(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(in), kgo.SessionTimeout(6*time.Second))
	go func() {
		for ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
			other.PollFetches(pctx)
			pcancel()
		}
	}()
	poll(func() bool { _, g := src.Member(); return g > gen && len(owned()) == 2 }, "the rebalance")
	kept, gone := owned(), []int32{}
	for p := range int32(4) {
		if !slices.Contains(kept, p) {
			gone = append(gone, p)
		}
	}

	fence := func(parts []int32, next int64) []component.GroupFence {
		offsets := schemas.Offsets{}
		for _, p := range parts {
			offsets.Set(sourcePrefix+in, p, next)
		}
		return []component.GroupFence{{Group: group, MemberID: id, Generation: gen, Offsets: offsets}}
	}
	s, _ := h.open()
	h.write(s, 0, 5)
	h.flush(s, 1)
	cp := h.checkpoint(1, 5)
	cp.Fences = fence(kept, 5) // taken before the rebalance, committed after it
	if err := s.Commit(ctx, cp); err != nil {
		t.Fatalf("commit of the kept partitions %v with the generation before the rebalance: %v", kept, err)
	}
	h.checkVisible(true, 5)
	offsets, err := kadm.NewClient(testClient(t)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range kept {
		if o, ok := offsets.Lookup(in, p); !ok || o.At != 5 {
			t.Errorf("the group's offset of kept partition %d: %+v, want 5", p, o)
		}
	}

	s, _ = h.open()
	defer s.Close(ctx)
	h.write(s, 5, 8)
	h.flush(s, 2)
	cp = h.checkpoint(2, 8)
	cp.Fences = fence(append(slices.Clone(kept), gone[0]), 8)
	if err := s.Commit(ctx, cp); !errors.Is(err, component.ErrFencedCopy) {
		t.Errorf("commit including partition %d, given to the other member: %v, want the copy fenced", gone[0], err)
	}
	h.checkVisible(true, 5)
}
