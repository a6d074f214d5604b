package join

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/combine"
	"github.com/sluicehq/sluice/transforms/window"
)

// The plan is a combine.Grouping: the records of every input are collected in one group
// per shared key and window, each as [input, row], in arrival order; a fired group is joined.

// NewState returns an empty state for windowing fn.
func (p *Plan) NewState(fn window.Fn) *combine.State {
	return combine.NewState(fn, []combine.Agg{{Fn: combine.Group, In: schemas.Type{Kind: schemas.Any}}})
}

// AddInput adds the records of b, which came on input, to their windows. A late record (its
// windows fired) is dropped and counted: Beam's Join has no error output.
func (p *Plan) AddInput(st *combine.State, input int, b *schemas.Batch, _ component.Emit) (combine.Stats, error) {
	var stats combine.Stats
	key := make([]any, len(p.loose))
	val := []any{nil}
	for i, row := range b.Rows {
		if i >= len(b.Time) {
			return stats, fmt.Errorf("%s: row %d of a batch has no event time", p.who, i)
		}
		for j, f := range p.keys[input] {
			key[j] = normal(row[f], p.loose[j])
		}
		val[0] = []any{int64(input), []any(row)}
		added, err := st.Add(key, val, b.Time[i].UnixNano())
		switch {
		case err != nil:
			return stats, &component.RowError{Pos: b.Pos[i], Err: fmt.Errorf("%s: %w", p.who, err)}
		case added.Windows == 0 && added.Late > 0:
			stats.Late++
		default:
			stats.Added++
		}
	}
	return stats, nil
}

// Rows joins the records of each fired group. A joined row's event time is the last
// millisecond of its window, as for Combine.
func (p *Plan) Rows(rs []combine.Result) *schemas.Batch {
	out := &schemas.Batch{Schema: p.Out}
	for _, r := range rs {
		per := make([][]schemas.Row, p.n)
		for _, v := range r.Values[0].([]any) {
			rec := v.([]any)
			in := int(rec[0].(int64))
			per[in] = append(per[in], schemas.Row(rec[1].([]any)))
		}
		at := time.Unix(0, r.Window.MaxTimestamp()).UTC()
		for _, t := range p.join(per) {
			row := make(schemas.Row, len(p.proj))
			for i, c := range p.proj {
				if r := t[c.input]; c.field < len(r) { // a padded side (nil) gives nulls
					row[i] = r[c.field]
				}
			}
			out.Rows = append(out.Rows, row)
			out.Time = append(out.Time, at)
			out.Windows = append(out.Windows, [2]int64{r.Window.Start, r.Window.End})
		}
	}
	return out
}

// join joins the records of one group, per input, input after input: each step matches the
// tuples so far with the records of the next input on the step's equalities (a null never
// matches), keeping unmatched ones padded with nulls as the step's kind says.
func (p *Plan) join(per [][]schemas.Row) [][]schemas.Row {
	tuples := make([][]schemas.Row, 0, len(per[0]))
	for _, r := range per[0] {
		t := make([]schemas.Row, p.n)
		t[0] = r
		tuples = append(tuples, t)
	}
	for i := 1; i < p.n; i++ {
		s := p.steps[i-1]
		index := map[string][]int{}
		for k, r := range per[i] {
			if key, ok := s.rightKey(r); ok {
				index[key] = append(index[key], k)
			}
		}
		matched := make([]bool, len(per[i]))
		var next [][]schemas.Row
		for _, t := range tuples {
			key, ok := s.leftKey(t)
			hits := index[key]
			if !ok {
				hits = nil
			}
			for _, k := range hits {
				c := slices.Clone(t)
				c[i] = per[i][k]
				next = append(next, c)
				matched[k] = true
			}
			if len(hits) == 0 && (s.kind == left || s.kind == full) {
				next = append(next, t)
			}
		}
		if s.kind == right || s.kind == full {
			for k, r := range per[i] {
				if !matched[k] {
					t := make([]schemas.Row, p.n)
					t[i] = r
					next = append(next, t)
				}
			}
		}
		tuples = next
	}
	return tuples
}

// leftKey is the key of a tuple of the inputs before the step; false when a value is null
// (or its input padded), which matches nothing.
func (s step) leftKey(t []schemas.Row) (string, bool) {
	var b []byte
	for _, c := range s.on {
		r := t[c.left.input]
		if r == nil || r[c.left.field] == nil {
			return "", false
		}
		b = appendKey(b, normal(r[c.left.field], c.loose))
	}
	return string(b), true
}

// rightKey is the key of a record of the input the step joins.
func (s step) rightKey(r schemas.Row) (string, bool) {
	var b []byte
	for _, c := range s.on {
		if r[c.right] == nil {
			return "", false
		}
		b = appendKey(b, normal(r[c.right], c.loose))
	}
	return string(b), true
}

// normal makes equal numbers of different kinds equal values: an integer compared with
// numbers is a number.
func normal(v any, loose bool) any {
	if i, ok := v.(int64); ok && loose {
		return float64(i)
	}
	return v
}

// appendKey appends an encoding of v that equal values share and different values do not.
func appendKey(b []byte, v any) []byte {
	str := func(tag byte, s string) []byte {
		b = strconv.AppendInt(append(b, tag), int64(len(s)), 10)
		return append(append(b, ':'), s...)
	}
	switch x := v.(type) {
	case int64:
		return str('i', strconv.FormatInt(x, 10))
	case float64:
		if x == 0 {
			x = 0 // -0 == 0
		}
		return str('f', strconv.FormatUint(math.Float64bits(x), 16))
	case string:
		return str('s', x)
	case []byte:
		return str('y', string(x))
	case bool:
		return str('b', strconv.FormatBool(x))
	case time.Time:
		return str('t', strconv.FormatInt(x.UnixNano(), 10))
	case *big.Rat:
		return str('d', x.RatString())
	}
	return str('x', fmt.Sprintf("%#v", v))
}

// AppendKey appends the encoding of the key all inputs share, of row of input: the rows
// of one group (to join) encode equal.
func (p *Plan) AppendKey(dst []byte, input int, row schemas.Row) ([]byte, error) {
	key := make([]any, len(p.loose))
	for j, f := range p.keys[input] {
		key[j] = normal(row[f], p.loose[j])
	}
	return combine.AppendRow(dst, key)
}
