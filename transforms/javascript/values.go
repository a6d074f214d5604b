package javascript

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"time"

	"github.com/dop251/goja"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// shape is a schema type with its conversions precomputed (expr.Shape).
type shape = expr.Shape

// rowShape is the shape of a row of schema in.
func rowShape(in *schemas.Schema) *shape { return expr.RowShape(in) }

// value converts v, a row value of s's type, to JavaScript on lane l.
func value(s *shape, l *lane, v any) goja.Value {
	if v == nil {
		return goja.Null()
	}
	switch s.Type.Kind {
	case schemas.Struct:
		switch x := v.(type) {
		case map[string]any:
			return l.rt.NewDynamicObject(&rowObject{lane: l, shape: s, m: x})
		case schemas.Row:
			return l.rt.NewDynamicObject(&rowObject{lane: l, shape: s, r: x})
		}
	case schemas.Array:
		if x, ok := v.([]any); ok && s.Elem != nil {
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = value(s.Elem, l, e)
			}
			return l.rt.NewArray(out...)
		}
	case schemas.Map:
		if x, ok := v.(map[string]any); ok && s.Elem != nil {
			o := l.rt.NewObject()
			for _, k := range sortedKeys(x) {
				_ = o.Set(k, value(s.Elem, l, x[k]))
			}
			return o
		}
	}
	return l.toJS(v)
}

// toJS converts a row value of any type to JavaScript, by its Go type: timestamps become
// Dates (of milliseconds, JavaScript's precision), decimals numbers, bytes ArrayBuffers.
func (l *lane) toJS(v any) goja.Value {
	switch x := v.(type) {
	case nil:
		return goja.Null()
	case time.Time:
		d, err := l.rt.New(l.date, l.rt.ToValue(x.UnixMilli()))
		if err != nil {
			return goja.Null()
		}
		return d
	case *big.Rat:
		f, _ := x.Float64()
		return l.rt.ToValue(f)
	case []byte:
		return l.rt.ToValue(l.rt.NewArrayBuffer(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = l.toJS(e)
		}
		return l.rt.NewArray(out...)
	case map[string]any:
		o := l.rt.NewObject()
		for _, k := range sortedKeys(x) {
			_ = o.Set(k, l.toJS(x[k]))
		}
		return o
	}
	return l.rt.ToValue(v) // bool, int64, float64, string
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// rowObject is Beam's row as the code sees it: an object whose properties are the fields,
// converted when read (nested structs are rows too). It is read-only: Beam hands the code a
// copy, and a write here would be lost silently.
type rowObject struct {
	lane  *lane
	shape *shape
	r     schemas.Row    // a top-level row, by field index
	m     map[string]any // a nested struct, by name
}

func (o *rowObject) get(i int) any {
	if o.r != nil {
		return o.r[i]
	}
	return o.m[o.shape.Fields[i].Name]
}

func (o *rowObject) Get(key string) goja.Value {
	i, ok := o.shape.Index[key]
	if !ok {
		return nil
	}
	return value(o.shape.Sub[i], o.lane, o.get(i))
}

func (o *rowObject) Has(key string) bool         { _, ok := o.shape.Index[key]; return ok }
func (o *rowObject) Set(string, goja.Value) bool { return false }
func (o *rowObject) Delete(string) bool          { return false }
func (o *rowObject) Keys() []string              { return o.shape.Keys }

func (o *rowObject) toMap() map[string]any {
	out := make(map[string]any, len(o.shape.Fields))
	for i, f := range o.shape.Fields {
		out[f.Name] = o.get(i)
	}
	return out
}

// toGo converts a result to the row representation: null and undefined to nil, numbers to
// int64 when integral (as Beam's js2py does) and float64 otherwise, arrays to []any,
// objects and rows to map[string]any, Dates to time.Time.
func toGo(v goja.Value) (any, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		switch x := v.Export().(type) {
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
			return x, nil
		case int64, string, bool:
			return x, nil
		default:
			return nil, fmt.Errorf("TypeError: cannot return a %s as a field value", typeName(v))
		}
	}
	switch x := o.Export().(type) {
	case *rowObject:
		return x.toMap(), nil
	case time.Time:
		return x.UTC(), nil
	case goja.ArrayBuffer:
		return append([]byte(nil), x.Bytes()...), nil
	}
	switch o.ClassName() {
	case "Array":
		n := int(o.Get("length").ToInteger())
		out := make([]any, n)
		for i := range out {
			e, err := toGo(o.Get(fmt.Sprint(i)))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case "Object":
		out := make(map[string]any)
		for _, k := range o.Keys() {
			e, err := toGo(o.Get(k))
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("TypeError: cannot return a %s as a field value", typeName(v))
}

// typeName names a value's type for messages: the class of an object, else typeof.
func typeName(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		return o.ClassName()
	}
	return v.ExportType().String()
}
