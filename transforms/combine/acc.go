package combine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sluicehq/sluice/schemas"
)

// Fn is a built-in combine function of Beam YAML's Combine.
type Fn uint8

// The combine functions, with Beam's names.
const (
	Sum Fn = iota + 1
	Count
	Min
	Max
	Mean
	All
	Any
	Group
	Concat
	// Beam's combiners that sluice adds (see fns.go); the numbers are those of checkpoints,
	// so new functions are appended.
	Top
	Latest
	Sample
	// Reduce is a Python function (a, b) -> value applied pairwise.
	Reduce
)

var fnNames = [...]string{"", "sum", "count", "min", "max", "mean", "all", "any", "group", "concat", "top", "latest", "sample"}

func (f Fn) String() string {
	if f == Reduce {
		return "python function"
	}
	if int(f) < len(fnNames) {
		return fnNames[f]
	}
	return fmt.Sprintf("fn(%d)", f)
}

// FnNames returns the names of the combine functions.
func FnNames() []string { return fnNames[1:] }

// ParseFn returns the combine function called name.
func ParseFn(name string) (Fn, bool) {
	for i, n := range fnNames {
		if i > 0 && n == name {
			return Fn(i), true
		}
	}
	return 0, false
}

// Agg is one combined output: a function over values of a type.
type Agg struct {
	Fn Fn
	// In is the type of the values; Nullable whether they can be null.
	In       schemas.Type
	Nullable bool
	// N is how many values top and sample keep; Reverse makes top keep the smallest.
	N       int
	Reverse bool
	// Keyed: top orders by a key computed from the row (a keyed pair is added), not by the values.
	Keyed bool
	// reduce is the function of Reduce, compiled for values of type In.
	reduce *reducer
}

// ordered are the kinds min and max compare.
var ordered = map[schemas.Kind]bool{schemas.Any: true, schemas.Int64: true, schemas.Float64: true,
	schemas.String: true, schemas.Timestamp: true, schemas.Date: true, schemas.Decimal: true, schemas.Bool: true, schemas.Bytes: true}

// Check returns why fn cannot combine values of the agg's type, or nil.
func (a Agg) Check() error {
	k := a.In.Kind
	switch a.Fn {
	case Sum, Mean:
		if k != schemas.Int64 && k != schemas.Float64 && k != schemas.Any {
			return fmt.Errorf("%s needs numbers, but the values are of type %s", a.Fn, a.In)
		}
	case Min, Max:
		if !ordered[k] {
			return fmt.Errorf("%s needs values that can be ordered, but the values are of type %s", a.Fn, a.In)
		}
	case All, Any:
		if k != schemas.Bool && k != schemas.Any {
			return fmt.Errorf("%s needs booleans, but the values are of type %s", a.Fn, a.In)
		}
	case Concat:
		if k != schemas.String && k != schemas.Array && k != schemas.Any {
			return fmt.Errorf("concat needs strings or lists, but the values are of type %s", a.In)
		}
	case Top:
		if !a.Keyed && !ordered[k] {
			return fmt.Errorf("top needs values that can be ordered, or a key that can, but the values are of type %s", a.In)
		}
	case Count, Group, Latest, Sample, Reduce:
	default:
		return fmt.Errorf("unknown combine function %d", a.Fn)
	}
	return nil
}

// Out returns the type of the combined value, as Beam gives it: count is an integer, mean a
// number, all and any booleans, group a list of the values; sum, min, max and concat keep
// the values' type. Sum, min, max and mean are null when every value was null.
func (a Agg) Out() (t schemas.Type, nullable bool) {
	switch a.Fn {
	case Count:
		return schemas.Type{Kind: schemas.Int64}, false
	case Mean:
		return schemas.Type{Kind: schemas.Float64}, a.Nullable
	case All, Any:
		return schemas.Type{Kind: schemas.Bool}, false
	case Group:
		elem := a.In
		return schemas.Type{Kind: schemas.Array, Elem: &elem}, false
	case Concat:
		return a.In, false
	case Top, Sample:
		elem := a.In
		return schemas.Type{Kind: schemas.Array, Elem: &elem}, false
	}
	return a.In, a.Nullable
}

// Acc accumulates the values of one output in one window of one key. Check and Add are
// separate so that a record that feeds several accumulators is added to all or none.
type Acc interface {
	// Check returns the error adding v would give (a value of the wrong type, an
	// overflow), without changing the accumulator.
	Check(v any) error
	// Add adds v, which Check accepted.
	Add(v any)
	// Merge adds everything o (an accumulator of the same Agg) has accumulated; o's values
	// come after the receiver's. On error the receiver is unchanged.
	Merge(o Acc) error
	// Result returns the combined value.
	Result() any
	// size is the memory the values take beyond the accumulator itself.
	size() int
	appendTo(b []byte) ([]byte, error)
	readFrom(d *decoder)
}

// New returns an empty accumulator for the agg.
func (a Agg) New() Acc {
	switch a.Fn {
	case Sum:
		return &sumAcc{float: a.In.Kind == schemas.Float64}
	case Count:
		return &countAcc{}
	case Min, Max:
		return &extremeAcc{max: a.Fn == Max}
	case Mean:
		return &meanAcc{}
	case All, Any:
		return &boolAcc{all: a.Fn == All, v: a.Fn == All}
	case Group:
		return &groupAcc{}
	case Concat:
		return &concatAcc{text: a.In.Kind == schemas.String}
	case Top:
		return &topAcc{n: a.N, reverse: a.Reverse}
	case Latest:
		return &latestAcc{}
	case Sample:
		return &sampleAcc{n: a.N}
	case Reduce:
		return &reduceAcc{r: a.reduce}
	}
	panic(fmt.Sprintf("combine: no accumulator for %v", a.Fn))
}

// merge adds v, a partial result of another accumulator, after checking it.
func merge(a Acc, v any) error {
	if err := a.Check(v); err != nil {
		return err
	}
	a.Add(v)
	return nil
}

var errOverflow = errors.New("the sum overflows a 64-bit integer")

// sumAcc sums integers exactly and switches to floats at the first float, as Python's sum.
// Nulls are skipped.
type sumAcc struct {
	i     int64
	f     float64
	float bool
	n     int64
}

func (s *sumAcc) Check(v any) error {
	switch x := v.(type) {
	case nil, float64:
	case int64:
		if r := s.i + x; !s.float && (r > s.i) != (x > 0) {
			return errOverflow
		}
	default:
		return notA("a number", v)
	}
	return nil
}

func (s *sumAcc) Add(v any) {
	switch x := v.(type) {
	case nil:
		return
	case int64:
		if s.float {
			s.f += float64(x)
		} else {
			s.i += x
		}
	case float64:
		if !s.float {
			s.float, s.f = true, float64(s.i)
		}
		s.f += x
	}
	s.n++
}

func (s *sumAcc) Merge(o Acc) error {
	x := o.(*sumAcc)
	if x.n == 0 {
		return nil
	}
	n := s.n + x.n
	if err := merge(s, x.Result()); err != nil {
		return err
	}
	s.n = n
	return nil
}

func (s *sumAcc) Result() any {
	switch {
	case s.n == 0:
		return nil
	case s.float:
		return s.f
	}
	return s.i
}

// countAcc counts records, nulls included, as Beam's CountCombineFn.
type countAcc struct{ n int64 }

func (c *countAcc) Check(any) error   { return nil }
func (c *countAcc) Add(any)           { c.n++ }
func (c *countAcc) Merge(o Acc) error { c.n += o.(*countAcc).n; return nil }
func (c *countAcc) Result() any       { return c.n }

// extremeAcc is min or max; nulls are skipped and ties keep the first value.
type extremeAcc struct {
	v   any
	max bool
}

func (e *extremeAcc) Check(v any) error {
	switch {
	case v == nil:
	case rank(v) > 6:
		return notA("a value that can be ordered", v)
	case e.v != nil && rank(v) != rank(e.v):
		return errCompare(v, e.v)
	}
	return nil
}

func (e *extremeAcc) Add(v any) {
	if v == nil {
		return
	}
	if c := compare(v, e.v); e.v == nil || (c > 0) == e.max && c != 0 {
		e.v = v
	}
}

func (e *extremeAcc) Merge(o Acc) error { return merge(e, o.(*extremeAcc).v) }
func (e *extremeAcc) Result() any       { return e.v }

// meanAcc averages numbers into a float; nulls are skipped.
type meanAcc struct {
	sum float64
	n   int64
}

func (m *meanAcc) Check(v any) error {
	switch v.(type) {
	case nil, int64, float64:
		return nil
	}
	return notA("a number", v)
}

func (m *meanAcc) Add(v any) {
	switch x := v.(type) {
	case int64:
		m.sum += float64(x)
	case float64:
		m.sum += x
	default:
		return
	}
	m.n++
}

func (m *meanAcc) Merge(o Acc) error {
	x := o.(*meanAcc)
	m.sum, m.n = m.sum+x.sum, m.n+x.n
	return nil
}

func (m *meanAcc) Result() any {
	if m.n == 0 {
		return nil
	}
	return m.sum / float64(m.n)
}

// boolAcc is all or any. As in Python, a null value counts as false.
type boolAcc struct{ all, v bool }

func (b *boolAcc) Check(v any) error {
	if _, ok := v.(bool); !ok && v != nil {
		return notA("a boolean", v)
	}
	return nil
}

func (b *boolAcc) Add(v any) {
	x, _ := v.(bool)
	if b.all {
		b.v = b.v && x
	} else {
		b.v = b.v || x
	}
}

func (b *boolAcc) Merge(o Acc) error { b.Add(o.(*boolAcc).v); return nil }
func (b *boolAcc) Result() any       { return b.v }

// groupAcc collects the values in arrival order, nulls included, as Beam's group. It keeps
// them encoded (codec.go), one after another: a list of a million integers takes a few bytes
// each instead of a boxed value and a slot of a []any, and a snapshot copies the bytes as
// they are. Result decodes them when the window fires.
type groupAcc struct {
	enc []byte // the values' encodings, in arrival order
	n   int
}

func (g *groupAcc) Check(v any) error { return encodable(v) }

func (g *groupAcc) Add(v any) {
	// Check accepted v, so the encoding cannot fail.
	g.enc, _ = appendValue(g.enc, v)
	g.n++
}

func (g *groupAcc) Merge(o Acc) error {
	x := o.(*groupAcc)
	g.enc, g.n = append(g.enc, x.enc...), g.n+x.n
	return nil
}

func (g *groupAcc) Result() any {
	vals := make([]any, g.n)
	d := newDecoder(g.enc)
	for i := range vals {
		vals[i] = d.value()
	}
	return vals
}

func (g *groupAcc) size() int { return len(g.enc) }

// appendTo writes the values as one encoded list, the format appendValue gives a []any.
func (g *groupAcc) appendTo(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(append(b, tagArray), uint64(g.n))
	return append(b, g.enc...), nil
}

func (g *groupAcc) readFrom(d *decoder) {
	if d.Byte() != tagArray {
		d.Fail()
		return
	}
	n := d.Count()
	start := d.B
	for range n {
		d.skip()
	}
	if d.Err != nil {
		return
	}
	g.enc, g.n = slices.Clone(start[:len(start)-len(d.B)]), n
}

// concatAcc joins lists into one list, as Beam's ConcatListCombineFn, or strings into one
// string (sluice adds). Null values are skipped.
type concatAcc struct {
	text  bool
	s     []byte
	vals  []any
	bytes int
}

func (c *concatAcc) Check(v any) error {
	switch v.(type) {
	case nil:
	case string:
		if !c.text && len(c.vals) > 0 {
			return notA("a list", v)
		}
	case []any:
		if c.text {
			return notA("a string", v)
		}
	default:
		return notA("a string or a list", v)
	}
	return nil
}

func (c *concatAcc) Add(v any) {
	switch x := v.(type) {
	case string:
		c.text = true
		c.s = append(c.s, x...)
	case []any:
		c.vals = append(c.vals, x...)
		c.bytes += elemsSize(x)
	}
}

func (c *concatAcc) Merge(o Acc) error {
	x := o.(*concatAcc)
	if x.text {
		return merge(c, string(x.s))
	}
	return merge(c, x.vals)
}

func (c *concatAcc) Result() any {
	if c.text {
		return string(c.s)
	}
	if c.vals == nil {
		return []any{}
	}
	return c.vals
}

func (c *concatAcc) size() int { return len(c.s) + c.bytes }

// Fixed-size accumulators take no memory beyond themselves.

func (*sumAcc) size() int     { return 0 }
func (*countAcc) size() int   { return 0 }
func (*extremeAcc) size() int { return 0 }
func (*meanAcc) size() int    { return 0 }
func (*boolAcc) size() int    { return 0 }

// The fixed-size accumulators encode as varints and float bits.

func (s *sumAcc) appendTo(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, s.n)
	if s.float {
		return binary.BigEndian.AppendUint64(append(b, 1), math.Float64bits(s.f)), nil
	}
	return binary.AppendVarint(append(b, 0), s.i), nil
}

func (s *sumAcc) readFrom(d *decoder) {
	s.n = d.Varint()
	s.float = d.Byte() == 1
	if s.float {
		s.f = d.Float64()
	} else {
		s.i = d.Varint()
	}
}

func (c *countAcc) appendTo(b []byte) ([]byte, error) { return binary.AppendVarint(b, c.n), nil }
func (c *countAcc) readFrom(d *decoder)               { c.n = d.Varint() }

func (e *extremeAcc) appendTo(b []byte) ([]byte, error) { return appendValue(b, e.v) }
func (e *extremeAcc) readFrom(d *decoder)               { e.v = d.value() }

func (m *meanAcc) appendTo(b []byte) ([]byte, error) {
	return binary.AppendVarint(binary.BigEndian.AppendUint64(b, math.Float64bits(m.sum)), m.n), nil
}

func (m *meanAcc) readFrom(d *decoder) {
	m.sum = d.Float64()
	m.n = d.Varint()
}

func (b *boolAcc) appendTo(buf []byte) ([]byte, error) {
	if b.v {
		return append(buf, 1), nil
	}
	return append(buf, 0), nil
}

func (b *boolAcc) readFrom(d *decoder) { b.v = d.Byte() == 1 }

func (c *concatAcc) appendTo(b []byte) ([]byte, error) {
	if c.text {
		return appendValue(b, string(c.s))
	}
	return appendValue(b, c.Result())
}

func (c *concatAcc) readFrom(d *decoder) {
	switch v := d.value().(type) {
	case string:
		c.text, c.s = true, []byte(v)
	case []any:
		c.text, c.vals, c.bytes = false, v, elemsSize(v)
	default:
		d.Fail()
	}
}

func errCompare(a, b any) error {
	return fmt.Errorf("cannot compare %s with %s", schemas.Describe(a), schemas.Describe(b))
}

func notA(want string, v any) error {
	return fmt.Errorf("cannot combine %s: it is not %s", schemas.Describe(v), want)
}
