package combine

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

const countByUser = "config:\n  group_by: user\n  combine:\n    clicks: {value: n, fn: count}\n    n: sum"

// sessionClicks is Beam's session example: alice at 1, 3, 101, 109, 115; bob at 7, 12, 20.
var sessionClicks = []click{
	{"alice", int64(1), 1, 1}, {"alice", int64(1), 1, 3}, {"alice", int64(1), 1, 101},
	{"alice", int64(1), 1, 109}, {"alice", int64(1), 1, 115},
	{"bob", int64(1), 1, 7}, {"bob", int64(1), 1, 12}, {"bob", int64(1), 1, 20},
}

func TestSessionsBeamExample(t *testing.T) {
	p := mustBuild(t, "Combine", countByUser, clicks)
	want := "[alice] [1.0, 13.0) [2 2]\n[bob] [7.0, 30.0) [3 3]\n[alice] [101.0, 125.0) [3 3]"
	orders := map[string][]click{"in order": sessionClicks, "reversed": reversed(sessionClicks), "shuffled": shuffled(sessionClicks, 1)}
	for name, in := range orders {
		st := p.NewState(window.Sessions(10 * time.Second))
		add(t, p, st, in...)
		rs := st.Fire(window.MaxWatermark)
		if got := show(rs); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
		// Beam's follow-up: keep the sessions longer than 15 s.
		var long []Result
		for _, r := range rs {
			if r.Window.End-r.Window.Start > 15*sec {
				long = append(long, r)
			}
		}
		if got := show(long); got != "[bob] [7.0, 30.0) [3 3]\n[alice] [101.0, 125.0) [3 3]" {
			t.Errorf("%s: sessions longer than 15 s:\n%s", name, got)
		}
		if st.Len() != 0 || st.Size() != 0 {
			t.Errorf("%s: state after firing everything: %d windows, %d bytes", name, st.Len(), st.Size())
		}
	}
}

// A session fires once the watermark passes its end, not before; later records of the
// key start a new session.
func TestSessionsFireWithTheWatermark(t *testing.T) {
	p := mustBuild(t, "Combine", countByUser, clicks)
	st := p.NewState(window.Sessions(10 * time.Second))
	add(t, p, st, sessionClicks[:2]...) // alice 1, 3: session [1, 13)
	if rs := st.Fire(12 * sec); len(rs) != 0 {
		t.Errorf("fired before the session's end: %s", show(rs))
	}
	add(t, p, st, click{"alice", int64(1), 1, 12}) // extends the session to [1, 22)
	if rs := st.Fire(21 * sec); len(rs) != 0 {
		t.Errorf("fired the extended session early: %s", show(rs))
	}
	if got := show(st.Fire(22 * sec)); got != "[alice] [1.0, 22.0) [3 3]" {
		t.Errorf("fired %s", got)
	}
	if s := add(t, p, st, click{"alice", int64(1), 1, 5}); s.Late != 1 || s.Added != 0 {
		t.Errorf("a record for the fired session was not late: %+v", s)
	}
}

// A record that bridges two sessions of a key merges them.
func TestSessionsBridge(t *testing.T) {
	p := mustBuild(t, "Combine", "config: {group_by: user, combine: {n: sum, all: {value: n, fn: group}}}", clicks)
	st := p.NewState(window.Sessions(10 * time.Second))
	add(t, p, st, click{"a", int64(1), 0, 0}, click{"a", int64(2), 0, 25}, click{"a", int64(4), 0, 50})
	if st.Len() != 3 {
		t.Fatalf("%d sessions, want 3", st.Len())
	}
	add(t, p, st, click{"a", int64(8), 0, 12})  // [12, 22): a session of its own
	add(t, p, st, click{"a", int64(16), 0, 8})  // [8, 18) overlaps [0, 10) and [12, 22)
	add(t, p, st, click{"a", int64(32), 0, 20}) // [20, 30) bridges [0, 22) and [25, 35)
	// Merged sessions keep their values in the order of their starts, then the new one.
	if got := show(st.Fire(window.MaxWatermark)); got != "[a] [0.0, 35.0) [59 [1 8 16 2 32]]\n[a] [50.0, 60.0) [4 [4]]" {
		t.Errorf("merged sessions:\n%s", got)
	}
}

func TestFixedWindowCounts(t *testing.T) {
	p := mustBuild(t, "Combine", "config:\n  group_by: []\n  combine:\n    clicks: {value: user, fn: count}", clicks)
	st := p.NewState(window.Fixed(10*time.Second, 0))
	var in []click
	for i, at := range []int64{0, 3, 9, 10, 15, 19, 20, 35, 39, 39} {
		in = append(in, click{"u", int64(i), 0, at})
	}
	add(t, p, st, shuffled(in, 7)...)
	if got := show(st.Fire(20 * sec)); got != "[] [0.0, 10.0) [3]\n[] [10.0, 20.0) [3]" {
		t.Errorf("at watermark 20 s:\n%s", got)
	}
	if got := show(st.Fire(window.MaxWatermark)); got != "[] [20.0, 30.0) [1]\n[] [30.0, 40.0) [3]" {
		t.Errorf("at the end:\n%s", got)
	}
}

func TestSlidingWindowCounts(t *testing.T) {
	p := mustBuild(t, "Combine", "config: {group_by: user, combine: {n: sum}}", clicks)
	st := p.NewState(window.Sliding(10*time.Second, 5*time.Second, 0))
	add(t, p, st, click{"u", int64(1), 0, 1}, click{"u", int64(10), 0, 6}, click{"u", int64(100), 0, 12})
	want := "[u] [-5.0, 5.0) [1]\n[u] [0.0, 10.0) [11]\n[u] [5.0, 15.0) [110]\n[u] [10.0, 20.0) [100]"
	if got := show(st.Fire(window.MaxWatermark)); got != want {
		t.Errorf("sliding:\n%s\nwant\n%s", got, want)
	}
}

// Results come ordered by window end, then key, whatever the arrival order.
func TestFireOrder(t *testing.T) {
	p := mustBuild(t, "Combine", "config: {group_by: [user, n], combine: {price: max}}", clicks)
	st := p.NewState(window.Fixed(10*time.Second, 0))
	add(t, p, st, click{"b", int64(1), 5, 15}, click{"a", int64(2), 1, 15}, click{"a", int64(1), 2, 15},
		click{"c", nil, 3, 5}, click{"a", int64(1), 4, 1}, click{"a", int64(1), 3, 2})
	want := "[a 1] [0.0, 10.0) [4]\n[c <nil>] [0.0, 10.0) [3]\n[a 1] [10.0, 20.0) [2]\n[a 2] [10.0, 20.0) [1]\n[b 1] [10.0, 20.0) [5]"
	if got := show(st.Fire(window.MaxWatermark)); got != want {
		t.Errorf("order:\n%s\nwant\n%s", got, want)
	}
}

// Late data: without allowed lateness a record behind the watermark misses its window;
// with allowed lateness the watermark lags the event times and the record still counts.
func TestLateData(t *testing.T) {
	p := mustBuild(t, "Combine", "config: {group_by: [], combine: {n: sum}}", clicks)
	run := func(lateness time.Duration) (string, int) {
		now := time.Unix(1e6, 0)
		tr := window.NewTracker(lateness, time.Minute)
		st := p.NewState(window.Fixed(10*time.Second, 0))
		late := 0
		for _, c := range []click{{"u", int64(1), 0, 2}, {"u", int64(2), 0, 13}, {"u", int64(4), 0, 8}, {"u", int64(8), 0, 24}, {"u", int64(16), 0, 9}} {
			b := batchOf(c)
			s, err := p.AddBatch(st, b, noEmit(t))
			if err != nil {
				t.Fatal(err)
			}
			late += s.Late
			tr.ObserveBatch(b, now)
			st.Fire(tr.Watermark(now)) // fire after every record: the strictest runner
		}
		return show(st.Fire(window.MaxWatermark)), late
	}
	// Without lateness: 13 s moves the watermark to 13 s, closing [0, 10): 8 s and 9 s are late.
	// Results fired along the way are not in the final Fire; only the last window is.
	if got, late := run(0); late != 2 || got != "[] [20.0, 30.0) [8]" {
		t.Errorf("no lateness: late %d, rest %s", late, got)
	}
	// With 5 s: after 13 s the watermark is 8 s, so 8 s counts; 24 s moves it to 19 s,
	// closing [0, 10) only, and 9 s is late.
	if got, late := run(5 * time.Second); late != 1 || got != "[] [10.0, 20.0) [2]\n[] [20.0, 30.0) [8]" {
		t.Errorf("5 s lateness: late %d, rest %s", late, got)
	}
	// With 20 s nothing is late.
	if _, late := run(20 * time.Second); late != 0 {
		t.Errorf("20 s lateness: %d late", late)
	}
}

// The watermark a state fired at survives a snapshot, so a window that fired before a
// crash cannot fire a second time after it.
func TestNoSecondFiringAfterRestore(t *testing.T) {
	p := mustBuild(t, "Combine", countByUser, clicks)
	st := p.NewState(window.Fixed(10*time.Second, 0))
	add(t, p, st, click{"a", int64(1), 0, 1})
	if len(st.Fire(10*sec)) != 1 {
		t.Fatal("no firing")
	}
	snap, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := p.NewState(window.Fixed(10*time.Second, 0))
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if s := add(t, p, r, click{"a", int64(1), 0, 2}); s.Late != 1 {
		t.Errorf("replayed record of a fired window: %+v", s)
	}
	if rs := r.Fire(window.MaxWatermark); len(rs) != 0 {
		t.Errorf("fired again: %s", show(rs))
	}
}

// Partial states of several lanes merged give what one state of all records gives.
func TestMergePartials(t *testing.T) {
	p := mustBuild(t, "Combine", "config:\n  group_by: user\n  combine:\n    n: sum\n    c: {value: n, fn: count}\n    lo: {value: n, fn: min}\n    hi: {value: n, fn: max}\n    avg: {value: n, fn: mean}\n    all: {value: ok, fn: all}",
		clicks)
	for _, fn := range []window.Fn{window.Fixed(10*time.Second, 0), window.Sliding(30*time.Second, 10*time.Second, 0),
		window.Sessions(5 * time.Second), {}} {
		in := randomClicks(300, 3)
		one := p.NewState(fn)
		add(t, p, one, in...)
		lanes := []*State{p.NewState(fn), p.NewState(fn), p.NewState(fn)}
		for i, c := range in {
			add(t, p, lanes[(i*7)%3], c)
		}
		for _, l := range lanes[1:] {
			if err := lanes[0].Merge(l); err != nil {
				t.Fatal(err)
			}
		}
		if lanes[0].Len() != one.Len() || lanes[0].Size() != one.Size() {
			t.Errorf("%v: merged %d windows of %d bytes, one state %d of %d", fn, lanes[0].Len(), lanes[0].Size(), one.Len(), one.Size())
		}
		want := show(one.Fire(window.MaxWatermark))
		if got := show(lanes[0].Fire(window.MaxWatermark)); got != want {
			t.Errorf("%v: merged partials differ:\n%s\nwant\n%s", fn, got, want)
		}
	}
	if err := p.NewState(window.Fn{}).Merge(p.NewState(window.Sessions(time.Second))); err == nil {
		t.Error("merged states of different windowing")
	}
}

// Snapshot and restore at random points of a stream, with firings in between, give the
// same output as a run without them, and equal states give equal snapshots.
func TestSnapshotRestoreMidStream(t *testing.T) {
	p := mustBuild(t, "Combine", "config:\n  group_by: user\n  combine:\n    n: sum\n    p: {value: price, fn: sum}\n    names: {value: user, fn: concat}\n    all: {value: n, fn: group}\n    any: {value: ok, fn: any}",
		clicks)
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		fns := []window.Fn{window.Fixed(10*time.Second, 0), window.Sliding(20*time.Second, 10*time.Second, 0), window.Sessions(4 * time.Second)}
		fn := fns[seed%3]
		in := randomClicks(400, seed)
		straight, restored := p.NewState(fn), p.NewState(fn)
		var want, got []Result
		for i := 0; i < len(in); {
			n := 1 + rng.IntN(40)
			chunk := in[i:min(i+n, len(in))]
			i += len(chunk)
			add(t, p, straight, chunk...)
			add(t, p, restored, chunk...)
			snap, err := restored.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := straight.Snapshot(); string(again) != string(snap) {
				t.Fatalf("seed %d: equal states, different snapshots", seed)
			}
			restored = p.NewState(fn)
			if err := restored.Restore(snap); err != nil {
				t.Fatal(err)
			}
			if restored.Size() != straight.Size() || restored.Len() != straight.Len() {
				t.Fatalf("seed %d: restored %d windows, %d bytes; was %d, %d", seed, restored.Len(), restored.Size(), straight.Len(), straight.Size())
			}
			wm := chunk[len(chunk)-1].at*sec - 15*sec
			want = append(want, straight.Fire(wm)...)
			got = append(got, restored.Fire(wm)...)
		}
		want = append(want, straight.Fire(window.MaxWatermark)...)
		got = append(got, restored.Fire(window.MaxWatermark)...)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d (%v): output differs after snapshots:\n%s\nwant\n%s", seed, fn, show(got), show(want))
		}
	}
}

func TestRestoreErrors(t *testing.T) {
	p := mustBuild(t, "Combine", countByUser, clicks)
	st := p.NewState(window.Fixed(time.Minute, 0))
	add(t, p, st, sessionClicks...)
	snap, _ := st.Snapshot()
	if err := p.NewState(window.Fixed(time.Hour, 0)).Restore(snap); err == nil ||
		err.Error() != "restore window state: the checkpoint does not fit the pipeline: window state of fixed(size=1m0s, offset=0s) windowing cannot be used with fixed(size=1h0m0s, offset=0s) windowing" {
		t.Errorf("changed windowing: %v", err)
	}
	other := mustBuild(t, "Combine", "config: {group_by: user, combine: {n: max}}", clicks)
	if err := other.NewState(window.Fixed(time.Minute, 0)).Restore(snap); err == nil {
		t.Error("restored into other aggs")
	}
	for _, bad := range [][]byte{nil, []byte("SLWS1"), snap[:len(snap)-3], append(append([]byte{}, snap...), 0)} {
		r := p.NewState(window.Fixed(time.Minute, 0))
		if err := r.Restore(bad); err == nil {
			t.Errorf("damaged snapshot of %d bytes restored", len(bad))
		}
	}
}

func FuzzRestore(f *testing.F) {
	p := mustBuild(f, "GroupByKey", "config: {key: user}", clicks)
	st := p.NewState(window.Sessions(time.Second))
	add(f, p, st, sessionClicks...)
	snap, _ := st.Snapshot()
	f.Add(snap)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := p.NewState(window.Sessions(time.Second))
		if r.Restore(b) == nil {
			r.Fire(window.MaxWatermark)
		}
	})
}

func TestSize(t *testing.T) {
	p := mustBuild(t, "GroupByKey", "config: {key: user, values: price}", clicks)
	st := p.NewState(window.Fixed(time.Minute, 0))
	prev := 0
	for i := range 100 {
		add(t, p, st, click{"user", int64(i), 1, int64(i)})
		if st.Size() <= prev {
			t.Fatalf("size did not grow with a grouped value: %d after %d", st.Size(), prev)
		}
		prev = st.Size()
	}
	st.Fire(window.MaxWatermark)
	if st.Size() != 0 {
		t.Errorf("size %d after firing everything", st.Size())
	}
}

// randomClicks returns n clicks of 5 users over 200 s, in random order.
func randomClicks(n int, seed uint64) []click {
	rng := rand.New(rand.NewPCG(seed, 42))
	users := []string{"ann", "bo", "cy", "di", "ed"}
	out := make([]click, n)
	for i := range out {
		var v any = int64(rng.IntN(100))
		if rng.IntN(10) == 0 {
			v = nil
		}
		out[i] = click{users[rng.IntN(len(users))], v, float64(rng.IntN(1000)) / 4, int64(i/2 + rng.IntN(20))}
	}
	return out
}

func reversed(cs []click) []click {
	out := make([]click, len(cs))
	for i, c := range cs {
		out[len(cs)-1-i] = c
	}
	return out
}

func shuffled(cs []click, seed uint64) []click {
	out := append([]click(nil), cs...)
	rand.New(rand.NewPCG(seed, 1)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

var _ = schemas.Row{}
