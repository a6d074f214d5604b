package combine

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
)

// The accumulators that select values rather than fold them: top, latest and sample. Each
// keeps what it selects in a fixed order, so that adding the same values in any order, or
// merging partial states, gives the same result, and a checkpoint restores it exactly.

// keyed is a value with the key top orders it by (the config's key, computed by the Plan).
type keyed struct{ k, v any }

// stamped is a value with the event time of its record (Unix ns), added by State.Add for
// latest and sample.
type stamped struct {
	t int64
	v any
}

// topAcc keeps the n largest values (the smallest with reverse) as Beam's TopCombineFn, the
// largest first. Nulls are skipped; of equal keys the earlier value ranks first.
type topAcc struct {
	n       int
	reverse bool
	top     []keyed
	bytes   int
}

func split(v any) keyed {
	if k, ok := v.(keyed); ok {
		return k
	}
	return keyed{v, v}
}

func (t *topAcc) Check(v any) error {
	k := split(v).k
	switch {
	case k == nil:
	case rank(k) > 6:
		return notA("a value that can be ordered", k)
	case len(t.top) > 0 && rank(k) != rank(t.top[0].k):
		return errCompare(k, t.top[0].k)
	}
	return nil
}

// before reports whether key a ranks before key b.
func (t *topAcc) before(a, b any) bool {
	c := compare(a, b)
	if t.reverse {
		return c < 0
	}
	return c > 0
}

func (t *topAcc) Add(v any) {
	e := split(v)
	if e.k == nil {
		return
	}
	// After every entry that ranks before e or ties with it.
	i := len(t.top)
	for i > 0 && t.before(e.k, t.top[i-1].k) {
		i--
	}
	if i >= t.n {
		return
	}
	t.top = slices.Insert(t.top, i, e)
	t.bytes += entrySize(e)
	if len(t.top) > t.n {
		t.bytes -= entrySize(t.top[t.n])
		t.top = t.top[:t.n]
	}
}

func entrySize(e keyed) int { return 2*16 + valueSize(e.k) + valueSize(e.v) }

func (t *topAcc) Merge(o Acc) error {
	x := o.(*topAcc)
	for _, e := range x.top {
		if err := t.Check(e); err != nil {
			return err
		}
	}
	for _, e := range x.top {
		t.Add(e)
	}
	return nil
}

func (t *topAcc) Result() any { return valuesOf(t.top, func(e keyed) any { return e.v }) }

// valuesOf returns the values of a selection's entries, in order.
func valuesOf[E any](es []E, value func(E) any) []any {
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = value(e)
	}
	return out
}

func (t *topAcc) size() int { return t.bytes }

func (t *topAcc) appendTo(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(t.top)))
	for _, e := range t.top {
		var err error
		if b, err = appendValue(b, e.k); err != nil {
			return b, err
		}
		if b, err = appendValue(b, e.v); err != nil {
			return b, err
		}
	}
	return b, nil
}

func (t *topAcc) readFrom(d *decoder) {
	n := d.Count()
	t.top, t.bytes = nil, 0
	for i := 0; i < n && d.Err == nil; i++ {
		k := d.value()
		t.Add(keyed{k, d.value()}) // a smaller n than the checkpoint's keeps the first n
	}
}

// latestAcc keeps the value of the latest event time, as Beam's LatestCombineFn; of equal
// times the later-added value wins. Null values are kept like any other.
type latestAcc struct {
	set bool
	t   int64
	v   any
}

func (l *latestAcc) Check(any) error { return nil }

func (l *latestAcc) Add(v any) {
	s := v.(stamped)
	if !l.set || s.t >= l.t {
		l.set, l.t, l.v = true, s.t, s.v
	}
}

func (l *latestAcc) Merge(o Acc) error {
	if x := o.(*latestAcc); x.set {
		l.Add(stamped{x.t, x.v})
	}
	return nil
}

func (l *latestAcc) Result() any { return l.v }
func (l *latestAcc) size() int   { return valueSize(l.v) }

func (l *latestAcc) appendTo(b []byte) ([]byte, error) {
	if !l.set {
		return append(b, 0), nil
	}
	return appendValue(binary.AppendVarint(append(b, 1), l.t), l.v)
}

func (l *latestAcc) readFrom(d *decoder) {
	if l.set = d.Byte() == 1; l.set {
		l.t = d.Varint()
		l.v = d.value()
	}
}

// sampleAcc keeps a sample of n values, as Beam's SampleCombineFn, chosen without a random
// generator so that replays and restarts choose the same: each value gets a priority, a hash
// of sampleSeed, the value and its event time, and the n values of the smallest priorities
// are kept (bottom-k sampling: uniform when the records differ in value or time). Records
// equal in both are one value to the hash and are kept or dropped together. The sample is
// ordered by priority.
type sampleAcc struct {
	n     int
	keep  []sampled
	bytes int
}

type sampled struct {
	p uint64
	v any
}

// sampleSeed is fixed: changing it changes which values a restored checkpoint samples.
const sampleSeed = 0x5eed_51c3_a11b_eef1

func priority(s stamped) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], sampleSeed)
	h.Write(buf[:])
	enc, _ := appendValue(binary.AppendVarint(nil, s.t), s.v)
	h.Write(enc)
	// splitmix64's finalizer spreads FNV's low-entropy high bits.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (s *sampleAcc) Check(v any) error {
	_, err := appendValue(nil, v.(stamped).v)
	return err
}

func (s *sampleAcc) Add(v any) {
	st := v.(stamped)
	s.insert(sampled{priority(st), st.v})
}

func (s *sampleAcc) insert(e sampled) {
	i, _ := slices.BinarySearchFunc(s.keep, e.p, func(x sampled, p uint64) int { return cmpOrdered(x.p, p) })
	for i < len(s.keep) && s.keep[i].p == e.p {
		i++
	}
	if i >= s.n {
		return
	}
	s.keep = slices.Insert(s.keep, i, e)
	s.bytes += elemSize(e.v) + 8
	if len(s.keep) > s.n {
		s.bytes -= elemSize(s.keep[s.n].v) + 8
		s.keep = s.keep[:s.n]
	}
}

func (s *sampleAcc) Merge(o Acc) error {
	for _, e := range o.(*sampleAcc).keep {
		s.insert(e)
	}
	return nil
}

func (s *sampleAcc) Result() any { return valuesOf(s.keep, func(e sampled) any { return e.v }) }

func (s *sampleAcc) size() int { return s.bytes }

func (s *sampleAcc) appendTo(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(s.keep)))
	for _, e := range s.keep {
		var err error
		if b, err = appendValue(binary.BigEndian.AppendUint64(b, e.p), e.v); err != nil {
			return b, err
		}
	}
	return b, nil
}

func (s *sampleAcc) readFrom(d *decoder) {
	n := d.Count()
	s.keep, s.bytes = nil, 0
	for i := 0; i < n && d.Err == nil; i++ {
		p := math.Float64bits(d.Float64()) // the 8 bytes as written
		s.insert(sampled{p, d.value()})
	}
}
