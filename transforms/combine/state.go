package combine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

// State keeps the accumulators of a Combine or GroupByKey per key and window until the
// watermark passes the window's end. It assigns records to windows (merging sessions),
// fires finished windows in a deterministic order, merges with another State (partial
// states of several lanes), and round-trips through Snapshot and Restore for checkpoints.
// A State is not safe for concurrent use.
type State struct {
	fn       window.Fn
	aggs     []Agg
	keys     map[string]*keyState
	wm       int64 // the largest watermark fired at: windows ending at or before it are closed
	earliest int64 // no open window ends before this
	size     int
	open     int

	empty []Acc           // accumulators that stay empty, to check values for new windows
	timed []bool          // the aggs whose values carry their event time (latest, sample)
	vals  []any           // scratch: the values being added, stamped
	buf   []byte          // scratch: the key being added
	wins  []window.Window // scratch: the windows of the record being added
}

type keyState struct {
	key  []any
	wins []*winState // disjoint when the windowing merges
	base int         // the memory of the key itself
	size int         // base and the windows
}

type winState struct {
	w    window.Window
	accs []Acc
}

// Result is one fired window of one key: the key's values, the window and the combined
// values in the order of the aggs.
type Result struct {
	Key    []any
	Window window.Window
	Values []any
}

// Added says what became of a record: how many windows took it and for how many it came
// late (the window had closed). A record whose windows were all late is dropped.
type Added struct {
	Windows, Late int
}

// Memory estimates, in bytes, of the fixed parts of the state.
const (
	keyOverhead = 96
	winOverhead = 64
	accOverhead = 32
)

// NewState returns an empty state for windowing fn and the aggs.
func NewState(fn window.Fn, aggs []Agg) *State {
	s := &State{fn: fn, aggs: aggs, keys: map[string]*keyState{}, wm: window.MinWatermark,
		earliest: window.MaxWatermark}
	s.empty = s.newAccs()
	for i, a := range aggs {
		if a.Fn == Latest || a.Fn == Sample {
			if s.timed == nil {
				s.timed, s.vals = make([]bool, len(aggs)), make([]any, len(aggs))
			}
			s.timed[i] = true
		}
	}
	return s
}

// Watermark returns the largest watermark the state fired at.
func (s *State) Watermark() int64 { return s.wm }

// Size estimates the memory the state takes, in bytes.
func (s *State) Size() int { return s.size }

// Len returns the number of open (key, window) pairs.
func (s *State) Len() int { return s.open }

// Add adds a record of event time t (Unix ns) with its key and one value per agg. The
// slices are not kept. An error (a value of the wrong type, an overflowing sum) leaves the
// state unchanged.
func (s *State) Add(key, values []any, t int64) (Added, error) {
	var res Added
	var err error
	if s.buf, err = appendKey(s.buf[:0], key); err != nil {
		return res, fmt.Errorf("group key: %w", err)
	}
	s.wins = s.fn.Assign(t, s.wins[:0])
	live := s.wins[:0]
	for _, w := range s.wins {
		if window.Closed(w, s.wm) {
			res.Late++
		} else {
			live = append(live, w)
		}
	}
	if len(live) == 0 {
		return res, nil
	}
	if s.timed != nil {
		for i, v := range values {
			if s.timed[i] {
				v = stamped{t, v}
			}
			s.vals[i] = v
		}
		values = s.vals
		defer clear(s.vals)
	}
	ks := s.keys[string(s.buf)]
	if s.fn.Merging() {
		err = s.addMerging(ks, key, live[0], values)
	} else {
		err = s.addFixed(ks, key, live, values)
	}
	if err != nil {
		return Added{}, err
	}
	res.Windows = len(live)
	return res, nil
}

// addFixed adds values to the windows ws of a key that may not exist yet (ks nil).
func (s *State) addFixed(ks *keyState, key []any, ws []window.Window, values []any) error {
	var found [8]*winState
	targets := found[:0]
	for _, w := range ws {
		var t *winState
		if ks != nil {
			t = ks.find(w)
		}
		if err := s.check(t, values); err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if ks == nil {
		ks = s.newKey(key)
	}
	for i, t := range targets {
		if t == nil {
			t = s.newWindow(ks, ws[i])
		}
		s.add(ks, t.accs, values)
	}
	return nil
}

// addMerging adds a record with proto-window p to a key of merging (session) windows: the
// windows p overlaps merge with it into one.
func (s *State) addMerging(ks *keyState, key []any, p window.Window, values []any) error {
	var over []*winState
	if ks != nil {
		for _, ws := range ks.wins {
			if ws.w.Intersects(p) {
				over = append(over, ws)
			}
		}
	}
	switch len(over) {
	case 0:
		if err := s.check(nil, values); err != nil {
			return err
		}
		if ks == nil {
			ks = s.newKey(key)
		}
		s.add(ks, s.newWindow(ks, p).accs, values)
	case 1:
		if err := s.check(over[0], values); err != nil {
			return err
		}
		over[0].w = over[0].w.Span(p)
		s.add(ks, over[0].accs, values)
	default:
		merged, err := s.mergeWindows(over, p)
		if err != nil {
			return err
		}
		if err := s.check(merged, values); err != nil {
			return err
		}
		s.replace(ks, over, merged)
		s.add(ks, merged.accs, values)
	}
	return nil
}

// mergeWindows combines windows (in order of their start, ws's order on ties) into a new
// one that also spans p.
func (s *State) mergeWindows(ws []*winState, p window.Window) (*winState, error) {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b *winState) int { return cmpOrdered(a.w.Start, b.w.Start) })
	m := &winState{w: p, accs: s.newAccs()}
	for _, w := range ws {
		m.w = m.w.Span(w.w)
		for i, a := range m.accs {
			if err := a.Merge(w.accs[i]); err != nil {
				return nil, fmt.Errorf("%s: %w", s.aggs[i].Fn, err)
			}
		}
	}
	return m, nil
}

// replace puts merged in place of the windows old of ks.
func (s *State) replace(ks *keyState, old []*winState, merged *winState) {
	before := ks.size
	ks.wins = slices.DeleteFunc(ks.wins, func(w *winState) bool { return slices.Contains(old, w) })
	ks.wins = append(ks.wins, merged)
	s.open -= len(old) - 1
	ks.size = ks.base
	for _, w := range ks.wins {
		ks.size += s.winSize(w)
	}
	s.size += ks.size - before
}

func (ks *keyState) find(w window.Window) *winState {
	for _, ws := range ks.wins {
		if ws.w == w {
			return ws
		}
	}
	return nil
}

// check returns the error adding values to window ws (nil: a new one) would give.
func (s *State) check(ws *winState, values []any) error {
	accs := s.empty
	if ws != nil {
		accs = ws.accs
	}
	for i, a := range accs {
		if err := a.Check(values[i]); err != nil {
			return fmt.Errorf("%s: %w", s.aggs[i].Fn, err)
		}
	}
	return nil
}

// add adds checked values to the accumulators of a window of ks.
func (s *State) add(ks *keyState, accs []Acc, values []any) {
	for i, a := range accs {
		before := a.size()
		a.Add(values[i])
		if d := a.size() - before; d != 0 {
			ks.size += d
			s.size += d
		}
	}
}

func (s *State) newAccs() []Acc {
	accs := make([]Acc, len(s.aggs))
	for i, a := range s.aggs {
		accs[i] = a.New()
	}
	return accs
}

func (s *State) newKey(key []any) *keyState {
	ks := &keyState{key: slices.Clone(key)}
	ks.base = keyOverhead + len(s.buf)
	for _, v := range key {
		ks.base += valueSize(v)
	}
	ks.size = ks.base
	s.keys[string(s.buf)] = ks
	s.size += ks.size
	return ks
}

func (s *State) newWindow(ks *keyState, w window.Window) *winState {
	ws := &winState{w: w, accs: s.newAccs()}
	ks.wins = append(ks.wins, ws)
	n := s.winSize(ws)
	ks.size += n
	s.size += n
	s.open++
	s.earliest = min(s.earliest, w.End)
	return ws
}

func (s *State) winSize(ws *winState) int {
	n := winOverhead + len(ws.accs)*accOverhead
	for _, a := range ws.accs {
		n += a.size()
	}
	return n
}

// Fire closes every window that ends at or before the watermark wm (Unix ns; a smaller
// watermark than before changes nothing) and returns their results, ordered by window
// end, then key, then window start. Records for closed windows are late from then on.
func (s *State) Fire(wm int64) []Result {
	s.wm = max(s.wm, wm)
	if s.wm < s.earliest {
		return nil
	}
	var out []Result
	earliest := window.MaxWatermark
	for k, ks := range s.keys {
		keep := ks.wins[:0]
		for _, ws := range ks.wins {
			if !window.Closed(ws.w, s.wm) {
				keep = append(keep, ws)
				earliest = min(earliest, ws.w.End)
				continue
			}
			vals := make([]any, len(ws.accs))
			for i, a := range ws.accs {
				vals[i] = a.Result()
			}
			out = append(out, Result{Key: ks.key, Window: ws.w, Values: vals})
			n := s.winSize(ws)
			ks.size -= n
			s.size -= n
			s.open--
		}
		clear(ks.wins[len(keep):])
		ks.wins = keep
		if len(keep) == 0 {
			delete(s.keys, k)
			s.size -= ks.size
		}
	}
	s.earliest = earliest
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Window.End != b.Window.End {
			return a.Window.End < b.Window.End
		}
		if c := compareKeys(a.Key, b.Key); c != 0 {
			return c < 0
		}
		return a.Window.Start < b.Window.Start
	})
	return out
}

// Merge adds everything o holds to s: the partial state of another lane over the same
// windowing and aggs. o must not be used afterwards. For a key and window both hold, o's
// values come after s's; the watermark is the larger one. On error (an overflowing sum)
// part of o may have been merged.
func (s *State) Merge(o *State) error {
	if err := s.compatible(o.fn, o.aggs); err != nil {
		return err
	}
	s.wm = max(s.wm, o.wm)
	for k, oks := range o.keys {
		ks := s.keys[k]
		if ks == nil {
			s.keys[k] = oks
			s.size += oks.size
			s.open += len(oks.wins)
			for _, w := range oks.wins {
				s.earliest = min(s.earliest, w.w.End)
			}
			continue
		}
		for _, ow := range oks.wins {
			if err := s.mergeWindow(ks, ow); err != nil {
				return err
			}
		}
	}
	o.keys, o.size, o.open, o.earliest = map[string]*keyState{}, 0, 0, window.MaxWatermark
	return nil
}

// mergeWindow adds window ow of another state to ks.
func (s *State) mergeWindow(ks *keyState, ow *winState) error {
	var over []*winState
	for _, ws := range ks.wins {
		if ws.w == ow.w || (s.fn.Merging() && ws.w.Intersects(ow.w)) {
			over = append(over, ws)
		}
	}
	if len(over) == 0 {
		ks.wins = append(ks.wins, ow)
		n := s.winSize(ow)
		ks.size += n
		s.size += n
		s.open++
		s.earliest = min(s.earliest, ow.w.End)
		return nil
	}
	merged, err := s.mergeWindows(append(over, ow), ow.w)
	if err != nil {
		return err
	}
	s.replace(ks, over, merged)
	s.earliest = min(s.earliest, merged.w.End)
	return nil
}

// compatible returns an error unless states of fn and aggs can be merged into s.
func (s *State) compatible(fn window.Fn, aggs []Agg) error {
	if fn != s.fn {
		return fmt.Errorf("window state of %s windowing cannot be used with %s windowing", fn, s.fn)
	}
	if len(aggs) != len(s.aggs) {
		return fmt.Errorf("window state of %d combined values cannot be used with %d", len(aggs), len(s.aggs))
	}
	for i, a := range aggs {
		if a.Fn != s.aggs[i].Fn || a.In.Kind != s.aggs[i].In.Kind {
			return fmt.Errorf("window state of %s over %s values cannot be used for %s over %s values",
				a.Fn, a.In.Kind, s.aggs[i].Fn, s.aggs[i].In.Kind)
		}
	}
	return nil
}

// snapshotMagic starts every snapshot; the digit is the format version.
const snapshotMagic = "SLWS1"

// Snapshot encodes the state for a checkpoint. Equal states give equal bytes: keys are
// written in the order of their encoding, a key's windows by start.
func (s *State) Snapshot() ([]byte, error) {
	b := append([]byte(nil), snapshotMagic...)
	b = append(b, byte(s.fn.Kind))
	for _, v := range []int64{s.fn.Size, s.fn.Period, s.fn.Offset, s.fn.Gap} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(s.aggs)))
	for _, a := range s.aggs {
		b = append(b, byte(a.Fn), byte(a.In.Kind))
	}
	b = binary.AppendVarint(b, s.wm)
	keys := make([]string, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		ks := s.keys[k]
		b = append(binary.AppendUvarint(b, uint64(len(k))), k...)
		wins := slices.Clone(ks.wins)
		slices.SortFunc(wins, func(x, y *winState) int { return cmpOrdered(x.w.Start, y.w.Start) })
		b = binary.AppendUvarint(b, uint64(len(wins)))
		for _, ws := range wins {
			b = binary.AppendVarint(binary.AppendVarint(b, ws.w.Start), ws.w.End)
			for _, a := range ws.accs {
				var err error
				if b, err = a.appendTo(b); err != nil {
					return nil, fmt.Errorf("snapshot window state: %w", err)
				}
			}
		}
	}
	return b, nil
}

// Restore replaces the state with a snapshot, which must have been taken of a state with
// the same windowing and aggs.
func (s *State) Restore(snap []byte) error {
	if !bytes.HasPrefix(snap, []byte(snapshotMagic)) {
		return fmt.Errorf("restore window state: %w", errDamaged)
	}
	d := newDecoder(snap[len(snapshotMagic):])
	fn := window.Fn{Kind: window.Kind(d.Byte()), Size: d.Varint(), Period: d.Varint(), Offset: d.Varint(), Gap: d.Varint()}
	aggs := make([]Agg, d.Count())
	for i := range aggs {
		aggs[i].Fn = Fn(d.Byte())
		aggs[i].In.Kind = schemas.Kind(d.Byte())
	}
	if d.Err == nil {
		if err := s.compatible(fn, aggs); err != nil {
			return fmt.Errorf("restore window state: the checkpoint does not fit the pipeline: %w", err)
		}
	}
	r := NewState(s.fn, s.aggs)
	r.wm = d.Varint()
	n := d.Count()
	for i := 0; i < n && d.Err == nil; i++ {
		k := d.Bytes()
		key, ok := newDecoder(k).value().([]any)
		if !ok {
			d.Fail()
			break
		}
		r.buf = append(r.buf[:0], k...)
		ks := r.newKey(key)
		nw := d.Count()
		for j := 0; j < nw && d.Err == nil; j++ {
			w := window.Window{Start: d.Varint(), End: d.Varint()}
			ws := &winState{w: w, accs: r.newAccs()}
			for _, a := range ws.accs {
				a.readFrom(d)
			}
			ks.wins = append(ks.wins, ws)
			sz := r.winSize(ws)
			ks.size += sz
			r.size += sz
			r.open++
			r.earliest = min(r.earliest, w.End)
		}
	}
	if d.Err != nil || len(d.B) != 0 {
		return fmt.Errorf("restore window state: %w", errDamaged)
	}
	s.wm, s.keys, s.size, s.open, s.earliest = r.wm, r.keys, r.size, r.open, r.earliest
	return nil
}
