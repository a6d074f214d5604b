package python

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"time"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// shape is a schema type with its conversions precomputed (expr.Shape).
type shape = expr.Shape

// rowShape is the shape of a row of schema in.
func rowShape(in *schemas.Schema) *shape { return expr.RowShape(in) }

// value converts v, a row value of s's type, to Starlark.
func value(s *shape, v any) starlark.Value {
	if v == nil {
		return starlark.None
	}
	switch s.Type.Kind {
	case schemas.Struct:
		switch x := v.(type) {
		case map[string]any:
			return &row{shape: s, m: x}
		case schemas.Row:
			return &row{shape: s, r: x}
		}
	case schemas.Array:
		if x, ok := v.([]any); ok && s.Elem != nil {
			out := make([]starlark.Value, len(x))
			for i, e := range x {
				out[i] = value(s.Elem, e)
			}
			return starlark.NewList(out)
		}
	case schemas.Map:
		if x, ok := v.(map[string]any); ok && s.Elem != nil {
			d := starlark.NewDict(len(x))
			for _, k := range sortedKeys(x) {
				_ = d.SetKey(starlark.String(k), value(s.Elem, x[k]))
			}
			return d
		}
	}
	return toStarlark(v)
}

// toStarlark converts a row value of any type to Starlark, by its Go type.
func toStarlark(v any) starlark.Value {
	switch x := v.(type) {
	case nil:
		return starlark.None
	case bool:
		return starlark.Bool(x)
	case int64:
		return starlark.MakeInt64(x)
	case int:
		return starlark.MakeInt(x)
	case float64:
		return starlark.Float(x)
	case string:
		return starlark.String(x)
	case []byte:
		return starlark.Bytes(x)
	case time.Time:
		return timestamp{x}
	case *big.Rat:
		f, _ := x.Float64()
		return starlark.Float(f)
	case []any:
		out := make([]starlark.Value, len(x))
		for i, e := range x {
			out[i] = toStarlark(e)
		}
		return starlark.NewList(out)
	case map[string]any:
		d := starlark.NewDict(len(x))
		for _, k := range sortedKeys(x) {
			_ = d.SetKey(starlark.String(k), toStarlark(x[k]))
		}
		return d
	case starlark.Value:
		return x
	}
	return starlark.String(fmt.Sprint(v))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// toGo converts a result to the row representation: None to nil, int to int64, float to
// float64, lists and tuples to []any, dicts and rows to map[string]any, timestamps to
// time.Time; durations are float seconds, as Beam compares them with numbers.
func toGo(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("OverflowError: %s does not fit in a 64-bit integer", x)
		}
		return i, nil
	case starlark.Float:
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return []byte(x), nil
	case timestamp:
		return x.t.UTC(), nil
	case *row:
		return x.toMap()
	case *starlark.Dict:
		out := make(map[string]any, x.Len())
		for _, item := range x.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("TypeError: a dict returned as a row value needs string keys, not %s", item[0].Type())
			}
			e, err := toGo(item[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = e
		}
		return out, nil
	case starlark.Iterable:
		if _, isSeq := x.(starlark.Sequence); !isSeq {
			if _, isSet := x.(*starlark.Set); !isSet {
				break
			}
		}
		var out []any
		it := x.Iterate()
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, fmt.Errorf("TypeError: cannot return a %s as a field value", v.Type())
}

// row is Beam's Row as the code sees it: fields read as attributes (row.field), nested
// structs as rows too. Values are converted when read.
type row struct {
	shape *shape
	r     schemas.Row    // a top-level row, by field index
	m     map[string]any // a nested struct, by name
}

var _ starlark.HasAttrs = (*row)(nil)

func (r *row) get(i int) any {
	if r.r != nil {
		return r.r[i]
	}
	return r.m[r.shape.Fields[i].Name]
}

func (r *row) Attr(name string) (starlark.Value, error) {
	i, ok := r.shape.Index[name]
	if !ok {
		if name == "_asdict" {
			return starlark.NewBuiltin("_asdict", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
				return r.dict(), nil
			}), nil
		}
		return nil, nil
	}
	return value(r.shape.Sub[i], r.get(i)), nil
}

func (r *row) AttrNames() []string {
	names := make([]string, len(r.shape.Fields))
	for i, f := range r.shape.Fields {
		names[i] = f.Name
	}
	return names
}

func (r *row) dict() *starlark.Dict {
	d := starlark.NewDict(len(r.shape.Fields))
	for i, f := range r.shape.Fields {
		_ = d.SetKey(starlark.String(f.Name), value(r.shape.Sub[i], r.get(i)))
	}
	return d
}

func (r *row) toMap() (map[string]any, error) {
	out := make(map[string]any, len(r.shape.Fields))
	for i, f := range r.shape.Fields {
		out[f.Name] = r.get(i)
	}
	return out, nil
}

func (r *row) String() string {
	s := "Row("
	for i, f := range r.shape.Fields {
		if i > 0 {
			s += ", "
		}
		v, _ := r.Attr(f.Name)
		s += f.Name + "=" + v.String()
	}
	return s + ")"
}

func (r *row) Type() string          { return "Row" }
func (r *row) Freeze()               {}
func (r *row) Truth() starlark.Bool  { return true }
func (r *row) Hash() (uint32, error) { return 0, fmt.Errorf("TypeError: unhashable type: 'Row'") }

// timestamp is Beam's Timestamp (and Python's datetime, whose basics it also answers to).
// The difference of two is a float of seconds, and numbers add seconds: durations compare
// with numbers as seconds, as in Beam.
type timestamp struct{ t time.Time }

var (
	_ starlark.HasBinary      = timestamp{}
	_ starlark.TotallyOrdered = timestamp{}
	_ starlark.HasAttrs       = timestamp{}
)

func (t timestamp) String() string        { return t.t.UTC().Format("2006-01-02 15:04:05.999999") }
func (t timestamp) Type() string          { return "Timestamp" }
func (t timestamp) Freeze()               {}
func (t timestamp) Truth() starlark.Bool  { return true }
func (t timestamp) Hash() (uint32, error) { return uint32(t.t.UnixNano() ^ t.t.UnixNano()>>32), nil }

func (t timestamp) Cmp(y starlark.Value, _ int) (int, error) {
	return t.t.Compare(y.(timestamp).t), nil
}

func (t timestamp) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if o, ok := y.(timestamp); ok && op == syntax.MINUS {
		d := t.t.Sub(o.t).Seconds()
		if side == starlark.Right {
			d = -d
		}
		return starlark.Float(d), nil
	}
	secs, ok := starlark.AsFloat(y)
	if !ok {
		return nil, nil
	}
	switch {
	case op == syntax.PLUS:
		return timestamp{t.t.Add(seconds(secs))}, nil
	case op == syntax.MINUS && side == starlark.Left:
		return timestamp{t.t.Add(-seconds(secs))}, nil
	}
	return nil, nil
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
