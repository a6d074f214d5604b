package window

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
)

const sec = int64(time.Second)

// win is the window [start, end) in seconds.
func win(start, end int64) Window { return Window{Start: start * sec, End: end * sec} }

func TestAssign(t *testing.T) {
	tests := []struct {
		name string
		fn   Fn
		at   int64 // ns
		want []Window
	}{
		{"global", Fn{}, 5 * sec, []Window{Global}},
		{"fixed", Fixed(10*time.Second, 0), 7 * sec, []Window{win(0, 10)}},
		{"fixed at a boundary", Fixed(10*time.Second, 0), 10 * sec, []Window{win(10, 20)}},
		{"fixed with offset", Fixed(10*time.Second, 2*time.Second), 11 * sec, []Window{win(2, 12)}},
		{"fixed with offset past size", Fixed(10*time.Second, 12*time.Second), 1 * sec, []Window{win(-8, 2)}},
		{"fixed before the epoch", Fixed(10*time.Second, 0), -3 * sec, []Window{win(-10, 0)}},
		{"sliding", Sliding(10*time.Second, 5*time.Second, 0), 7 * sec, []Window{win(5, 15), win(0, 10)}},
		{"sliding at a boundary", Sliding(10*time.Second, 5*time.Second, 0), 10 * sec, []Window{win(10, 20), win(5, 15)}},
		{"sliding period = size", Sliding(10*time.Second, 10*time.Second, 0), 7 * sec, []Window{win(0, 10)}},
		{"sliding 3 windows", Sliding(60*time.Second, 20*time.Second, 0), 65 * sec, []Window{win(60, 120), win(40, 100), win(20, 80)}},
		{"sessions", Sessions(10 * time.Second), 7 * sec, []Window{win(7, 17)}},
	}
	for _, tt := range tests {
		if got := tt.fn.Assign(tt.at, nil); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v windows of %s: got %v, want %v", tt.name, tt.fn, time.Duration(tt.at), got, tt.want)
		}
	}
}

// Every instant belongs to exactly size/period sliding windows, each containing it.
func TestSlidingCoversEveryInstant(t *testing.T) {
	fn := Sliding(60*time.Second, 15*time.Second, 5*time.Second)
	for at := -100 * sec; at < 100*sec; at += 7*sec + 1 {
		ws := fn.Assign(at, nil)
		if len(ws) != 4 {
			t.Fatalf("%d windows at %d", len(ws), at)
		}
		for _, w := range ws {
			if at < w.Start || at >= w.End || w.End-w.Start != 60*sec || (w.Start-5*sec)%(15*sec) != 0 {
				t.Fatalf("window %v for %d", w, at)
			}
		}
	}
}

func TestWindowString(t *testing.T) {
	tests := map[Window]string{
		win(7, 30):                  "[7.0, 30.0)",
		win(0, 10):                  "[0.0, 10.0)",
		{1.5e9, 2.5e9}:              "[1.5, 2.5)",
		win(1700000000, 1700000060): "[1700000000.0, 1700000060.0)",
		win(-10, 0):                 "[-10.0, 0.0)",
		Global:                      "GlobalWindow",
	}
	for w, want := range tests {
		if got := w.String(); got != want {
			t.Errorf("%#v: %q, want %q", w, got, want)
		}
	}
	if got := win(0, 10).MaxTimestamp(); got != 10*sec-int64(time.Millisecond) {
		t.Errorf("max timestamp %d", got)
	}
}

func TestSpecFn(t *testing.T) {
	tests := map[string]Fn{
		"{type: fixed, size: 60, offset: 10s}":   {Kind: KindFixed, Size: 60 * sec, Offset: 10 * sec},
		"{type: sliding, size: 1m, period: 15s}": {Kind: KindSliding, Size: 60 * sec, Period: 15 * sec},
		"{type: sessions, gap: 1.5s}":            {Kind: KindSessions, Gap: 1500 * int64(time.Millisecond)},
		"{type: global}":                         {},
	}
	for src, want := range tests {
		s, msg := decode(t, src)
		if msg != "" {
			t.Fatal(msg)
		}
		if got := s.Fn(); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
	if (*Spec)(nil).Fn() != (Fn{}) {
		t.Error("no spec is not global windowing")
	}
}

var (
	p0 = component.Partition{Source: "kafka:t", Partition: 0}
	p1 = component.Partition{Source: "kafka:t", Partition: 1}
)

func TestTrackerMinOverPartitions(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(2*time.Second, time.Minute)
	if wm := tr.Watermark(now); wm != MinWatermark {
		t.Fatalf("watermark before any record: %d", wm)
	}
	tr.Observe(p0, 50*sec, now)
	tr.Observe(p0, 40*sec, now) // out of order: the max counts
	tr.Observe(p1, 30*sec, now)
	if wm := tr.Watermark(now); wm != 28*sec {
		t.Errorf("watermark %d s, want 28 (slowest partition 30 s minus 2 s lateness)", wm/sec)
	}
	tr.Observe(p1, 70*sec, now)
	if wm := tr.Watermark(now); wm != 48*sec {
		t.Errorf("watermark %d s, want 48", wm/sec)
	}
}

func TestTrackerIdlePartitions(t *testing.T) {
	start := time.Unix(1000, 0)
	tr := NewTracker(0, 10*time.Second)
	tr.Observe(p0, 100*sec, start)
	tr.Register(p1, start) // assigned, nothing read yet: holds the watermark back
	if wm := tr.Watermark(start.Add(5 * time.Second)); wm != MinWatermark {
		t.Errorf("a registered partition without records did not hold the watermark: %d", wm)
	}
	tr.Observe(p0, 120*sec, start.Add(9*time.Second))
	if wm := tr.Watermark(start.Add(12 * time.Second)); wm != 120*sec {
		t.Errorf("idle partition 1 still holds the watermark: %d", wm)
	}
	// Partition 1 wakes up behind: the watermark does not go back.
	tr.Observe(p1, 60*sec, start.Add(13*time.Second))
	if wm := tr.Watermark(start.Add(13 * time.Second)); wm != 120*sec {
		t.Errorf("watermark went back to %d s", wm/sec)
	}
	// Everything idle: the largest partition watermark, so the stream's tail fires.
	tr.Observe(p1, 200*sec, start.Add(14*time.Second))
	if wm := tr.Watermark(start.Add(time.Hour)); wm != 200*sec {
		t.Errorf("all idle: watermark %d s, want 200", wm/sec)
	}
	// Without an idle timeout a silent partition holds the watermark for ever.
	tr = NewTracker(0, 0)
	tr.Observe(p0, 100*sec, start)
	tr.Observe(p1, 10*sec, start)
	if wm := tr.Watermark(start.Add(24 * time.Hour)); wm != 10*sec {
		t.Errorf("no idle timeout: watermark %d s", wm/sec)
	}
	tr.Forget(p1)
	if wm := tr.Watermark(start.Add(24 * time.Hour)); wm != 100*sec {
		t.Errorf("after Forget: watermark %d s", wm/sec)
	}
}

func TestTrackerSnapshot(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(time.Second, time.Minute)
	tr.Observe(p0, 50*sec, now)
	tr.Observe(component.Partition{Source: "kafka:other", Partition: 7}, 80*sec, now)
	want := tr.Watermark(now)
	snap := tr.Snapshot()
	if string(snap) != string(tr.Snapshot()) {
		t.Error("snapshot is not deterministic")
	}
	r := NewTracker(time.Second, time.Minute)
	if err := r.Restore(snap, now); err != nil {
		t.Fatal(err)
	}
	if got := r.Watermark(now); got != want || got != 49*sec {
		t.Errorf("restored watermark %d, want %d", got, want)
	}
	if err := r.Restore(snap[:len(snap)-1], now); err == nil {
		t.Error("a truncated snapshot restored")
	}
	if Min(3, 1, 2) != 1 || Min() != MaxWatermark {
		t.Error("Min")
	}
}

func TestClosed(t *testing.T) {
	w := win(0, 10)
	for wm, want := range map[int64]bool{9 * sec: false, 10*sec - 1: false, 10 * sec: true, 11 * sec: true, MinWatermark: false} {
		if Closed(w, wm) != want {
			t.Errorf("window %v at watermark %d: closed %v", w, wm, !want)
		}
	}
	if Closed(Global, 1<<62) || !Closed(Global, MaxWatermark) {
		t.Error("the global window closes only at the end of input")
	}
}
