package join_test

import (
	"slices"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

var (
	clickSchema = schemas.New(field("user", schemas.String), field("ad", schemas.String))
	buySchema   = schemas.New(field("buyer", schemas.String), field("amount", schemas.Int64))
	windowed    = "windowing: {type: fixed, size: 10s}\nconfig: {type: left, equalities: [{c: user, b: buyer}], fields: {c: [user, ad], b: [amount]}}"
	// Records of two fixed windows, [0, 10) and [10, 20), in two halves: what was read before
	// a checkpoint and what after it.
	clicksBefore = []rec{{1, schemas.Row{"u1", "a"}}, {4, schemas.Row{"u2", "b"}}, {11, schemas.Row{"u1", "c"}}}
	buysBefore   = []rec{{8, schemas.Row{"u2", int64(20)}}, {12, schemas.Row{"u1", int64(35)}}}
	clicksAfter  = []rec{{15, schemas.Row{"u2", "d"}}, {23, schemas.Row{"u3", "e"}}}
	buysAfter    = []rec{{13, schemas.Row{"u1", int64(7)}}, {19, schemas.Row{"u2", int64(3)}}, {24, schemas.Row{"u9", int64(1)}}}
	wantWindowed = []string{
		"[0.0, 10.0): u1 a -",
		"[0.0, 10.0): u2 b 20",
		"[10.0, 20.0): u1 c 35",
		"[10.0, 20.0): u1 c 7",
		"[10.0, 20.0): u2 d 3",
		"[20.0, 30.0): u3 e -",
	}
)

// A window fires once the watermark of every input passes its end, and holds the joins of
// its own records only.
func TestWindowsFireAtTheWatermark(t *testing.T) {
	j, _ := mustBuild(t, windowed, in{name: "c", schema: clickSchema}, in{name: "b", schema: buySchema})
	feed(t, j, 0, "c", clicksBefore...)
	// The buys' source has not even opened its partitions (the runner knows only the
	// clicks'): the input without records still holds the watermark back.
	if got := fire(t, j, false, "c"); len(got) != 0 {
		t.Errorf("fired before the buys were read: %v", got)
	}
	feed(t, j, 1, "b", buysBefore...)
	// The watermark is 11 s (the clicks'), so [0, 10) closes and [10, 20) stays open.
	same(t, "at 11 s", fire(t, j, false, "c", "b"), wantWindowed[:2])
	feed(t, j, 0, "c", clicksAfter...)
	feed(t, j, 1, "b", buysAfter...)
	same(t, "at 23 s", fire(t, j, false, "c", "b"), wantWindowed[2:5])
	same(t, "at the end", fire(t, j, true), wantWindowed[5:])
}

// A run that stops after a checkpoint taken mid-window and resumes from it gives every
// joined row once, as a run without the stop: the open window's records travel in the
// snapshot, and a replayed record of a window that fired before the stop is late, not
// joined again.
func TestRestoreMidWindow(t *testing.T) {
	inputs := []in{{name: "c", schema: clickSchema}, {name: "b", schema: buySchema}}
	first, _ := mustBuild(t, windowed, inputs...)
	feed(t, first, 0, "c", clicksBefore...)
	feed(t, first, 1, "b", buysBefore...)
	got := fire(t, first, false, "c", "b") // [0, 10) fires; [10, 20) is open
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	feed(t, first, 0, "c", clicksAfter[:1]...) // read after the checkpoint, then the process dies

	again, _ := mustBuild(t, windowed, inputs...)
	if err := again.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if !again.Fired().Equal(first.Fired()) {
		t.Errorf("restored fired offsets %v, want %v", again.Fired(), first.Fired())
	}
	feed(t, again, 0, "c", rec{3, schemas.Row{"u2", "replayed"}}) // a record of the fired window
	feed(t, again, 0, "c", clicksAfter...)
	feed(t, again, 1, "b", buysAfter...)
	got = append(got, fire(t, again, false, "c", "b")...)
	got = append(got, fire(t, again, true)...)
	slices.Sort(got)
	same(t, "stopped and resumed", got, wantWindowed)
	if _, late := again.Stats(); late != 1 {
		t.Errorf("%d late records, want the replayed one", late)
	}

	// The snapshot is deterministic: the same state gives the same bytes.
	other, _ := mustBuild(t, windowed, inputs...)
	if err := other.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if again2, _ := other.Snapshot(); !slices.Equal(again2, snap) {
		t.Error("a restored state snapshots to other bytes")
	}
}

// Sessions merge per join key over both inputs: a click and a buy 40 s apart join when a
// record between them bridges the gap, and not otherwise.
func TestSessionsJoin(t *testing.T) {
	src := "windowing: {type: sessions, gap: 30s}\nconfig: {type: inner, equalities: [{c: user, b: buyer}], fields: {c: [ad], b: [amount]}}"
	j, _ := mustBuild(t, src, in{name: "c", schema: clickSchema}, in{name: "b", schema: buySchema})
	feed(t, j, 0, "c", rec{0, schemas.Row{"u1", "a"}}, rec{0, schemas.Row{"u2", "b"}}, rec{20, schemas.Row{"u1", "bridge"}})
	feed(t, j, 1, "b", rec{40, schemas.Row{"u1", int64(5)}}, rec{40, schemas.Row{"u2", int64(6)}})
	same(t, "sessions", fire(t, j, true), []string{"[0.0, 70.0): a 5", "[0.0, 70.0): bridge 5"})
}
