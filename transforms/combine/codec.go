package combine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/internal/binread"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Values are encoded with a tag byte and a compact body. The encoding is deterministic
// (map keys sorted), so equal values encode to equal bytes: it is both the identity of a
// group key and the checkpoint format of accumulated values.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagBytes
	tagTime
	tagDecimal
	tagArray
	tagMap
)

// appendValue appends the encoding of v, one of the Go types a Row holds.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case bool:
		if x {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), x), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x)), nil
	case string:
		return append(binary.AppendUvarint(append(b, tagString), uint64(len(x))), x...), nil
	case []byte:
		return append(binary.AppendUvarint(append(b, tagBytes), uint64(len(x))), x...), nil
	case time.Time:
		b = binary.AppendVarint(append(b, tagTime), x.Unix())
		return binary.AppendUvarint(b, uint64(x.Nanosecond())), nil
	case *big.Rat:
		s := x.RatString()
		return append(binary.AppendUvarint(append(b, tagDecimal), uint64(len(s))), s...), nil
	case []any:
		return appendKey(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(x)))
		for _, k := range keys {
			b = append(binary.AppendUvarint(b, uint64(len(k))), k...)
			var err error
			if b, err = appendValue(b, x[k]); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, fmt.Errorf("cannot keep a value of Go type %T in window state", v)
}

// appendKey appends the encoding of a list of values (a group key) without boxing it.
func appendKey(b []byte, vs []any) ([]byte, error) {
	b = binary.AppendUvarint(append(b, tagArray), uint64(len(vs)))
	for _, v := range vs {
		var err error
		if b, err = appendValue(b, v); err != nil {
			return b, err
		}
	}
	return b, nil
}

var errDamaged = errors.New("window state snapshot is damaged")

// decoder reads what the append functions wrote, remembering the first failure.
type decoder struct{ binread.Reader }

func newDecoder(b []byte) *decoder {
	return &decoder{binread.Reader{B: b, Damaged: errDamaged}}
}

func (d *decoder) value() any {
	switch d.Byte() {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return d.Varint()
	case tagFloat:
		f := d.Float64()
		return f
	case tagString:
		return string(d.Bytes())
	case tagBytes:
		return bytes.Clone(d.Bytes())
	case tagTime:
		sec := d.Varint()
		return time.Unix(sec, int64(d.Uvarint())).UTC()
	case tagDecimal:
		r, ok := new(big.Rat).SetString(string(d.Bytes()))
		if !ok {
			d.Fail()
		}
		return r
	case tagArray:
		n := d.Count()
		a := make([]any, n)
		for i := range a {
			a[i] = d.value()
		}
		return a
	case tagMap:
		n := d.Count()
		m := make(map[string]any, n)
		for i := 0; i < n && d.Err == nil; i++ {
			k := string(d.Bytes())
			m[k] = d.value()
		}
		return m
	}
	d.Fail()
	return nil
}

// skip reads past one value without building it.
func (d *decoder) skip() {
	switch d.Byte() {
	case tagNull, tagFalse, tagTrue:
	case tagInt:
		d.Varint()
	case tagFloat:
		d.Float64()
	case tagString, tagBytes, tagDecimal:
		d.Bytes()
	case tagTime:
		d.Varint()
		d.Uvarint()
	case tagArray:
		n := d.Count()
		for i := 0; i < n && d.Err == nil; i++ {
			d.skip()
		}
	case tagMap:
		n := d.Count()
		for i := 0; i < n && d.Err == nil; i++ {
			d.Bytes()
			d.skip()
		}
	default:
		d.Fail()
	}
}

// encodable returns the error appendValue would give for v, without encoding it.
func encodable(v any) error {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte, time.Time, *big.Rat:
		return nil
	case []any:
		for _, e := range x {
			if err := encodable(e); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, e := range x {
			if err := encodable(e); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("cannot keep a value of Go type %T in window state", v)
}

// compare orders values for the output order of a window's keys: null first, then
// booleans, numbers (integers and floats together), strings, bytes, times, and anything
// else by its encoding.
func compare(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case nil:
		return 0
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case time.Time:
		return x.Compare(b.(time.Time))
	case *big.Rat:
		return x.Cmp(b.(*big.Rat))
	case int64, float64:
		return compareNumbers(a, b)
	}
	ea, _ := appendValue(nil, a)
	eb, _ := appendValue(nil, b)
	return bytes.Compare(ea, eb)
}

func rank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int64, float64:
		return 2
	case string:
		return 3
	case []byte:
		return 4
	case time.Time:
		return 5
	case *big.Rat:
		return 6
	}
	return 7
}

// compareNumbers compares int64 and float64 values exactly.
func compareNumbers(a, b any) int {
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		return cmpOrdered(ai, bi)
	}
	fa, fb := toFloat(a), toFloat(b)
	if c := cmpOrdered(fa, fb); c != 0 || (!aInt && !bInt) {
		return c
	}
	// Equal as floats but one is an integer: compare exactly.
	ra, rb := new(big.Rat), new(big.Rat)
	setRat(ra, a)
	setRat(rb, b)
	return ra.Cmp(rb)
}

func setRat(r *big.Rat, v any) {
	if i, ok := v.(int64); ok {
		r.SetInt64(i)
	} else if r.SetFloat64(v.(float64)) == nil {
		r.SetInt64(0)
	}
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func toFloat(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// compareKeys orders two group keys field by field.
func compareKeys(a, b []any) int {
	for i := range min(len(a), len(b)) {
		if c := compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// valueSize estimates the bytes a value takes in memory.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return 16 + len(x)
	case []byte:
		return 24 + len(x)
	case time.Time:
		return 24
	case *big.Rat:
		return 64
	case []any:
		return 24 + elemsSize(x)
	case map[string]any:
		n := 48
		for k, e := range x {
			n += 32 + len(k) + valueSize(e)
		}
		return n
	}
	return 8
}

// elemSize estimates the memory of a value held in a list.
func elemSize(v any) int { return 16 + valueSize(v) }

func elemsSize(vs []any) int {
	n := 0
	for _, v := range vs {
		n += elemSize(v)
	}
	return n
}

// AppendRow appends the encoding of a row's values (a repartition topic's records,
// docs/scaling.md): ReadRow gives them back with their Go types.
func AppendRow(b []byte, row []any) ([]byte, error) { return appendKey(b, row) }

// ReadRow decodes a row that AppendRow encoded at the start of b and returns the bytes after
// it.
func ReadRow(b []byte) ([]any, []byte, error) {
	d := newDecoder(b)
	row, ok := d.value().([]any)
	if d.Err != nil || !ok {
		return nil, nil, errDamaged
	}
	return row, d.B, nil
}
