package kafka

import (
	"context"
	"errors"
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
