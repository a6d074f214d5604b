package schemas

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"
)

// anyType is the element type of arrays and maps that do not say.
var anyType = Type{Kind: Any}

func elemOf(t *Type) *Type {
	if t.Elem == nil {
		return &anyType
	}
	return t.Elem
}

// Coerce converts v, a value as yaml.v3 or encoding/json decode it (nil, bool, int and the other
// Go integers, float64, json.Number, string, []any, map[string]any, time.Time, []byte), to the
// representation of t that a Row holds (see Kind). It accepts and rejects what
// JSONDecoder.Decode does, with the same messages: strings for Timestamp are RFC 3339, numbers
// for Timestamp are seconds since the epoch, strings for Bytes are base64. nullable says
// whether v may be nil. Keys of a Struct value that are not fields of t are ignored.
func Coerce(v any, t Type, nullable bool) (any, error) {
	out, err := coerce(v, &t)
	if err != nil {
		return nil, err
	}
	if out == nil && !nullable {
		return nil, &FieldError{Err: mismatch(&t, &scalar{kind: sNull}, "")}
	}
	return out, nil
}

func coerce(v any, t *Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case Array:
		return coerceArray(v, t)
	case Struct:
		m, err := stringMap(v, t)
		if err != nil {
			return nil, err
		}
		return coerceStruct(m, t)
	case Map:
		m, err := stringMap(v, t)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			c, err := coerce(e, elemOf(t))
			if err != nil {
				return nil, inField(err, k)
			}
			out[k] = c
		}
		return out, nil
	case Any:
		return coerceAny(v)
	}
	sc := toScalar(v)
	out, err := convertScalar(&sc, t)
	if err != nil {
		return nil, &FieldError{Err: err}
	}
	return out, nil
}

func coerceArray(v any, t *Type) (any, error) {
	var in []any
	switch x := v.(type) {
	case []any:
		in = x
	case []string:
		in = make([]any, len(x))
		for i, s := range x {
			in[i] = s
		}
	case []map[string]any:
		in = make([]any, len(x))
		for i, m := range x {
			in[i] = m
		}
	default:
		sc := toScalar(v)
		return nil, &FieldError{Err: mismatch(t, &sc, "")}
	}
	out := make([]any, len(in))
	for i, e := range in {
		c, err := coerce(e, elemOf(t))
		if err != nil {
			return nil, inIndex(err, i)
		}
		out[i] = c
	}
	return out, nil
}

func coerceStruct(m map[string]any, t *Type) (any, error) {
	out := make(map[string]any, len(t.Fields))
	for i := range t.Fields {
		f := &t.Fields[i]
		e, present := m[f.Name]
		c, err := coerce(e, &f.Type)
		if err != nil {
			return nil, inField(err, f.Name)
		}
		if c == nil && !f.Nullable {
			if !present {
				return nil, inField(errNotNullable, f.Name)
			}
			return nil, inField(mismatch(&f.Type, &scalar{kind: sNull}, ""), f.Name)
		}
		out[f.Name] = c
	}
	return out, nil
}

// stringMap accepts the two shapes decoders give an object in.
func stringMap(v any, t *Type) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				sc := toScalar(k)
				return nil, &FieldError{Err: fmt.Errorf("object keys must be strings, got %s", sc.describe())}
			}
			m[ks] = e
		}
		return m, nil
	}
	sc := toScalar(v)
	return nil, &FieldError{Err: mismatch(t, &sc, "")}
}

// coerceAny converts v to the plain values of an Any field: nil, bool, int64, float64, string,
// []any and map[string]any.
func coerceAny(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := coerceAny(e)
			if err != nil {
				return nil, inIndex(err, i)
			}
			out[i] = c
		}
		return out, nil
	case map[string]any, map[any]any:
		m, err := stringMap(x, &anyType)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			c, err := coerceAny(e)
			if err != nil {
				return nil, inField(err, k)
			}
			out[k] = c
		}
		return out, nil
	}
	sc := toScalar(v)
	if sc.kind == sObject || sc.kind == sArray {
		return nil, &FieldError{Err: fmt.Errorf("unsupported value %s", sc.describe())}
	}
	if sc.kind == sNumber && !isJSONNumber(sc.text) {
		return nil, &FieldError{Err: fmt.Errorf("invalid number %q", clip(sc.text))}
	}
	out, err := toAnyScalar(&sc)
	if err != nil {
		return nil, &FieldError{Err: err}
	}
	return out, nil
}

// toScalar classifies a Go value. Containers and values of other Go types come back as
// sArray or sObject, only good for an error message.
func toScalar(v any) scalar {
	switch x := v.(type) {
	case nil:
		return scalar{kind: sNull}
	case bool:
		return scalar{kind: sBool, b: x}
	case int:
		return scalar{kind: sInt, i: int64(x)}
	case int8:
		return scalar{kind: sInt, i: int64(x)}
	case int16:
		return scalar{kind: sInt, i: int64(x)}
	case int32:
		return scalar{kind: sInt, i: int64(x)}
	case int64:
		return scalar{kind: sInt, i: x}
	case uint:
		return uintScalar(uint64(x))
	case uint8:
		return scalar{kind: sInt, i: int64(x)}
	case uint16:
		return scalar{kind: sInt, i: int64(x)}
	case uint32:
		return scalar{kind: sInt, i: int64(x)}
	case uint64:
		return uintScalar(x)
	case float32:
		// Through the shortest decimal form, so 0.1 stays 0.1 and not 0.10000000149.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return scalar{kind: sFloat, f: f}
	case float64:
		return scalar{kind: sFloat, f: x}
	case json.Number:
		return scalar{kind: sNumber, text: string(x)}
	case string:
		return scalar{kind: sString, text: x}
	case time.Time:
		return scalar{kind: sTime, tm: x}
	case []byte:
		return scalar{kind: sBytes, raw: x}
	case *big.Rat:
		if x == nil {
			return scalar{kind: sNull}
		}
		return scalar{kind: sRat, rat: x}
	case []any, []string, []map[string]any:
		return scalar{kind: sArray}
	}
	return scalar{kind: sObject}
}

func uintScalar(u uint64) scalar {
	if u <= 1<<63-1 {
		return scalar{kind: sInt, i: int64(u)}
	}
	return scalar{kind: sNumber, text: strconv.FormatUint(u, 10)}
}
