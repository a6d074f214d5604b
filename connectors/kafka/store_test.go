package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
)

// ReadFromKafka's checkpoint store keeps one value per copy of a sink in the checkpoint topic:
// Load returns every copy's last one and no other sink's; a newer writer of a copy fences the
// older; a save whose group generation is stale is refused and leaves the value as it was.
func TestCheckpointStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in := newTopic(t, 1)
	store := build(t, "type: ReadFromKafka\nconfig:\n"+config(in, "format: RAW")).Component.(*source).CheckpointStore()
	sink := fmt.Sprintf("p-%s/out", in)
	load := func() string {
		t.Helper()
		got, err := store.Load(ctx, sink)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(values(got))
	}
	if got := load(); got != "map[]" {
		t.Fatalf("a new sink has %s", got)
	}
	openOf := func(sink, instance string) component.CheckpointWriter {
		t.Helper()
		w, err := store.Writer(ctx, sink, instance)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	open := func(instance string) component.CheckpointWriter { return openOf(sink, instance) }
	save := func(w component.CheckpointWriter, v string, fences ...component.GroupFence) error {
		return w.Save(ctx, []byte(v), fences)
	}
	a, b := open("a"), open("b")
	if err := errors.Join(save(a, "a1"), save(b, "b1"), save(a, "a2")); err != nil {
		t.Fatal(err)
	}
	if err := save(openOf(sink+"2", ""), "another sink"); err != nil {
		t.Fatal(err)
	}
	if got, want := load(), fmt.Sprintf("map[%[1]s@a:a2 %[1]s@b:b1]", sink); got != want {
		t.Errorf("loaded %s, want %s", got, want)
	}

	a2 := open("a") // a restart of copy a fences the old one
	if err := save(a, "zombie"); !errors.Is(err, component.ErrFencedCopy) {
		t.Errorf("the replaced writer saved: %v", err)
	}
	if err := save(a2, "a3"); err != nil {
		t.Fatal(err)
	}

	group := "store-" + in
	id, gen := joinGroup(ctx, t, group, in)
	fence := func(gen int32, next int64) component.GroupFence {
		return component.GroupFence{Group: group, MemberID: id, Generation: gen, Offsets: schemas.Offsets{sourcePrefix + in: {0: next}}}
	}
	if err := save(a2, "a4", fence(gen, 7)); err != nil {
		t.Fatalf("save with the current generation: %v", err)
	}
	if err := save(a2, "stale", fence(gen-1, 9)); !errors.Is(err, component.ErrFencedCopy) {
		t.Errorf("a save with a stale generation returned %v", err)
	}
	if got, want := load(), fmt.Sprintf("map[%[1]s@a:a4 %[1]s@b:b1]", sink); got != want {
		t.Errorf("after the fenced save: %s, want %s", got, want)
	}
	offsets, err := kadm.NewClient(testClient(t)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(in, 0); !ok || o.At != 7 {
		t.Errorf("the group's offset: %+v, want 7 (from the save that was not fenced)", o)
	}
}

func values(m map[string]component.Stored) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v.At.IsZero() {
			out[k] = "no time"
			continue
		}
		out[k] = string(v.Value)
	}
	return out
}
