package window

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Window is the half-open event-time interval [Start, End), in Unix nanoseconds. Global is
// the one window that holds all time.
type Window struct {
	Start, End int64
}

// Global is the window of every record that no windowing spec applies to, as in Beam.
var Global = Window{Start: math.MinInt64, End: math.MaxInt64}

// The watermarks that bound every event time: nothing has been seen, and the input is
// complete (every window, the global one included, fires).
const (
	MinWatermark int64 = math.MinInt64
	MaxWatermark int64 = math.MaxInt64
)

// Nanos returns t as Unix nanoseconds, the unit of windows and watermarks.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// IsGlobal reports whether w is the global window.
func (w Window) IsGlobal() bool { return w == Global }

// StartTime returns the start of w; the zero time for the global window.
func (w Window) StartTime() time.Time {
	if w.IsGlobal() {
		return time.Time{}
	}
	return time.Unix(0, w.Start).UTC()
}

// EndTime returns the (exclusive) end of w; the zero time for the global window.
func (w Window) EndTime() time.Time {
	if w.IsGlobal() {
		return time.Time{}
	}
	return time.Unix(0, w.End).UTC()
}

// MaxTimestamp is the event time of what a window's grouping emits: the last millisecond
// of the window, as Beam's default END_OF_WINDOW timestamp combiner gives it.
func (w Window) MaxTimestamp() int64 {
	if w.End == math.MaxInt64 {
		return w.End
	}
	return max(w.End-int64(time.Millisecond), w.Start)
}

// Intersects reports whether w and o share an instant.
func (w Window) Intersects(o Window) bool { return w.Start < o.End && o.Start < w.End }

// Span returns the smallest window that covers w and o.
func (w Window) Span(o Window) Window {
	return Window{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

// Type names the kind of window as Beam's ExtractWindowingInfo window_type does.
func (w Window) Type() string {
	if w.IsGlobal() {
		return "GlobalWindow"
	}
	return "IntervalWindow"
}

// String formats w as Beam does: "[7.0, 30.0)", in seconds since the epoch, or
// "GlobalWindow".
func (w Window) String() string {
	if w.IsGlobal() {
		return "GlobalWindow"
	}
	return "[" + seconds(w.Start) + ", " + seconds(w.End) + ")"
}

// seconds formats Unix nanoseconds as Python prints a float number of seconds: 7.0, 1.5.
func seconds(ns int64) string {
	s := strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64)
	for _, c := range s {
		if c == '.' {
			return s
		}
	}
	return s + ".0"
}

// Kind is the kind of a windowing function.
type Kind uint8

// The kinds of windowing, as the spec's type names them.
const (
	KindGlobal Kind = iota
	KindFixed
	KindSliding
	KindSessions
)

var kindNames = [...]string{"global", "fixed", "sliding", "sessions"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Fn assigns records to windows by event time. The zero Fn is global windowing. Durations
// are nanoseconds.
type Fn struct {
	Kind                      Kind
	Size, Period, Offset, Gap int64
}

// Fixed returns fixed windows of size, starting at offset past the epoch (modulo size).
func Fixed(size, offset time.Duration) Fn {
	return Fn{Kind: KindFixed, Size: int64(size), Offset: mod(int64(offset), int64(size))}
}

// Sliding returns windows of size starting every period, shifted by offset.
func Sliding(size, period, offset time.Duration) Fn {
	return Fn{Kind: KindSliding, Size: int64(size), Period: int64(period), Offset: mod(int64(offset), int64(period))}
}

// Sessions returns session windows that close after gap without records of their key.
func Sessions(gap time.Duration) Fn { return Fn{Kind: KindSessions, Gap: int64(gap)} }

// Fn returns the windowing function of the spec (nil: global).
func (s *Spec) Fn() Fn {
	if s == nil {
		return Fn{}
	}
	switch s.Type {
	case "fixed":
		return Fixed(time.Duration(s.Size), time.Duration(s.Offset))
	case "sliding":
		return Sliding(time.Duration(s.Size), time.Duration(s.Period), time.Duration(s.Offset))
	case "sessions":
		return Sessions(time.Duration(s.Gap))
	}
	return Fn{}
}

// Merging reports whether windows of f merge (sessions): a key's windows are only known
// once the records between them have been seen.
func (f Fn) Merging() bool { return f.Kind == KindSessions }

// Assign appends to into the windows a record of event time t belongs to, before any
// merging: one for global and fixed windows, size/period for sliding ones (latest start
// first, as Beam lists them), the record's own [t, t+gap) for sessions.
func (f Fn) Assign(t int64, into []Window) []Window {
	switch f.Kind {
	case KindFixed:
		start := t - mod(t-f.Offset, f.Size)
		return append(into, Window{Start: start, End: start + f.Size})
	case KindSliding:
		for start := t - mod(t-f.Offset, f.Period); start > t-f.Size; start -= f.Period {
			into = append(into, Window{Start: start, End: start + f.Size})
		}
		return into
	case KindSessions:
		return append(into, Window{Start: t, End: t + f.Gap})
	}
	return append(into, Global)
}

// String describes f as a windowing spec would: "fixed(size=1m0s)".
func (f Fn) String() string {
	d := func(ns int64) time.Duration { return time.Duration(ns) }
	switch f.Kind {
	case KindFixed:
		return fmt.Sprintf("fixed(size=%s, offset=%s)", d(f.Size), d(f.Offset))
	case KindSliding:
		return fmt.Sprintf("sliding(size=%s, period=%s, offset=%s)", d(f.Size), d(f.Period), d(f.Offset))
	case KindSessions:
		return fmt.Sprintf("sessions(gap=%s)", d(f.Gap))
	}
	return "global"
}

// mod is the modulo that is never negative, so that windows before the epoch line up too.
func mod(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// Closed reports whether the window w has fired, or would have, at watermark wm: its end
// is at or before the watermark. A record for a closed window is late. allowed_lateness is
// part of the watermark (see Tracker), so a window fires exactly once.
func Closed(w Window, wm int64) bool { return w.End <= wm }
