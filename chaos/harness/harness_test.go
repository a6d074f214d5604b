package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The schedule is the seed's alone: the same seed gives the same faults, in the ratio the
// flags promise, spread over the run after its quiet start.
func TestSchedule(t *testing.T) {
	a := schedule(7, 10*time.Minute, 4, 0.2)
	b := schedule(7, 10*time.Minute, 4, 0.2)
	if len(a) != 42 {
		t.Fatalf("%d actions, want 40 copy faults and 2 broker restarts", len(a))
	}
	kinds := map[faultKind]int{}
	for i, x := range a {
		if x != b[i] {
			t.Fatalf("action %d differs for the same seed: %+v and %+v", i, x, b[i])
		}
		if x.at < time.Minute || x.at >= 10*time.Minute || (i > 0 && x.at < a[i-1].at) {
			t.Errorf("action %d at %v: not in order within the run after its first minute", i, x.at)
		}
		if x.kind == faultStop && x.pause <= sessionTimer {
			t.Errorf("a SIGSTOP of %v does not outlast the session of %v", x.pause, sessionTimer)
		}
		kinds[x.kind]++
	}
	if kinds[faultKill] != 20 || kinds[faultTerm] != 10 || kinds[faultStop] != 10 || kinds[faultBroker] != 2 {
		t.Errorf("kinds %v, want 20 SIGKILL, 10 SIGTERM, 10 SIGSTOP, 2 broker", kinds)
	}
	if c := schedule(8, 10*time.Minute, 4, 0.2); c[0] == a[0] && c[1] == a[1] {
		t.Error("another seed gave the same schedule")
	}
}

// tally counts per id against the input topic: a row twice is a duplicate, an input record
// without a row is missing, a row of an id never produced is extra, and an id the input
// holds twice (a producer retry) may be there twice.
func TestTally(t *testing.T) {
	in, out := newIDCounts(), newIDCounts()
	in.ids = map[int64]int{1: 1, 2: 1, 3: 2, 4: 1}
	out.ids = map[int64]int{1: 1, 2: 3, 3: 2, 9: 1}
	out.addJSON([]byte(`{"id": 5, "amount": 1.5, "doubled": 4}`), true) // wrong mapping
	got := tally(in, out)
	want := Count{Expected: 5, Seen: 8, Duplicates: 2, Missing: 1, Extra: 2}
	if got != want {
		t.Errorf("tally = %+v, want %+v", got, want)
	}
	if out.bad != 1 || !strings.Contains(out.firstBad, `"id": 5`) {
		t.Errorf("the badly mapped row was not reported: %d, %q", out.bad, out.firstBad)
	}
	in.part = map[int64]int32{1: 0, 2: 1, 3: 1, 4: 2}
	if got := byPartition(in, out); got != "p1: +2 -0, p2: +0 -1" {
		t.Errorf("by partition: %q", got)
	}
}

// A result fails on a loss under any delivery, on a duplicate only under exactly_once, and
// the table says why.
func TestVerdict(t *testing.T) {
	cases := []struct {
		r    Result
		want string
	}{
		{Result{Delivery: AtLeastOnce, Count: Count{Duplicates: 3}}, "ok"},
		{Result{Delivery: ExactlyOnce, Count: Count{Duplicates: 3}}, "**DUPLICATES**"},
		{Result{Delivery: AtLeastOnce, Count: Count{Missing: 1}}, "**LOSS**"},
		{Result{Delivery: AtLeastOnce, InputLost: 1}, "**LOSS**"},
		{Result{Delivery: ExactlyOnce, FinalLag: 5, Count: Count{Missing: 5}}, "**LOSS, NOT DRAINED**"},
		{Result{Delivery: ExactlyOnce, Errors: []string{"x"}}, "**ERROR**"},
	}
	for _, c := range cases {
		if got := c.r.verdict(); got != c.want {
			t.Errorf("%+v: verdict %s, want %s", c.r, got, c.want)
		}
	}
	var b bytes.Buffer
	WriteMarkdown(&b, Defaults(), []*Result{{Sink: SinkKafka, Delivery: ExactlyOnce, Kills: 4, Count: Count{Expected: 10, Seen: 10}}})
	if !strings.Contains(b.String(), "| kafka | exactly_once | 0 | 4 |") || !strings.Contains(b.String(), "| **total** |") {
		t.Errorf("table:\n%s", b.String())
	}
}
