package avro

import (
	"fmt"
	"reflect"
	"slices"
	"time"
)

// resolveAvro returns the type that reads values written with the writer's type w as values of
// the reader's type r, following Avro's schema resolution: record fields are matched by name
// (or by the reader's aliases), the writer's extra fields are read and dropped, the reader's
// missing fields take their default (or null when they are nullable and have none); int, long
// and float widen to long, float and double; string and bytes read as each other; an enum
// symbol the reader lacks takes the reader's default symbol. Logical types follow the reader
// when the encodings are the same, as Avro resolves underlying types only.
func resolveAvro(w, r *avroType) (*avroType, error) {
	t, err := resolveValue(w, r)
	if err != nil {
		return nil, err
	}
	// The union branches are the writer's: they are in the bytes.
	t.nullable, t.nullIdx, t.valIdx = w.nullable, w.nullIdx, w.valIdx
	t.nullBad = w.nullable && !r.nullable
	return t, nil
}

// encoding returns the Avro type of the bytes of a kind, without its logical type.
func encoding(k avroKind) avroKind {
	switch k {
	case avroDate:
		return avroInt
	case avroTimestampMillis, avroTimestampMicros:
		return avroLong
	case avroDecimalBytes:
		return avroBytes
	case avroDecimalFixed:
		return avroFixed
	}
	return k
}

func resolveValue(w, r *avroType) (*avroType, error) {
	we, re := encoding(w.kind), encoding(r.kind)
	switch {
	case we == re:
		switch we {
		case avroFixed:
			if w.size != r.size {
				return nil, fmt.Errorf("avro field %q: the writer's schema has a fixed of %d bytes where the reader's has %d", r.path, w.size, r.size)
			}
		case avroEnum:
			return resolveEnum(w, r), nil
		case avroArray, avroMap:
			elem, err := resolveAvro(w.elem, r.elem)
			if err != nil {
				return nil, err
			}
			c := *r
			c.elem = elem
			return &c, nil
		case avroRecord:
			return resolveRecord(w, r)
		}
		c := *r // the same bytes, read as the reader says (its logical type)
		return &c, nil
	case we == avroInt && re == avroLong, we == avroString && re == avroBytes, we == avroBytes && re == avroString:
		c := *r // the same encoding
		return &c, nil
	case (we == avroInt || we == avroLong) && (re == avroFloat || re == avroDouble):
		c := *w
		c.kind, c.toFloat, c.path = we, true, r.path
		return &c, nil
	case we == avroFloat && re == avroDouble:
		c := *w
		c.kind, c.path = avroFloat, r.path
		return &c, nil
	}
	return nil, fmt.Errorf("avro field %q: the writer's schema has %s there, which cannot be read as the reader's %s", r.path, w.describe(), r.describe())
}

// resolveEnum maps the writer's symbol indexes to the reader's symbols.
func resolveEnum(w, r *avroType) *avroType {
	c := *r
	c.symbols = make([]string, len(w.symbols))
	c.unknown = nil
	for i, sym := range w.symbols {
		switch {
		case slices.Contains(r.symbols, sym):
			c.symbols[i] = sym
		case r.enumDefault != "":
			c.symbols[i] = r.enumDefault
		default:
			if c.unknown == nil {
				c.unknown = make([]string, len(w.symbols))
			}
			c.unknown[i] = sym
		}
	}
	return &c
}

// resolveRecord reads the writer's fields in the writer's order into the reader's places.
func resolveRecord(w, r *avroType) (*avroType, error) {
	c := &avroType{kind: avroRecord, path: r.path, width: len(r.fields)}
	used := make([]bool, len(r.fields))
	for _, wf := range w.fields {
		j := readerField(r, wf.name, used)
		if j < 0 {
			c.fields = append(c.fields, avroField{name: wf.name, t: wf.t, dst: -1})
			continue
		}
		used[j] = true
		ft, err := resolveAvro(wf.t, r.fields[j].t)
		if err != nil {
			return nil, err
		}
		c.fields = append(c.fields, avroField{name: r.fields[j].name, t: ft, dst: j})
	}
	for j, rf := range r.fields {
		if used[j] {
			continue
		}
		switch {
		case rf.hasDef:
			c.defaults = append(c.defaults, avroDefault{dst: j, name: rf.name, value: rf.def})
		case rf.defErr != nil:
			return nil, fmt.Errorf("avro field %q of the reader's schema is not in the writer's record, and its default cannot be used: %w", rf.t.path, rf.defErr)
		case rf.t.nullable:
			c.defaults = append(c.defaults, avroDefault{dst: j, name: rf.name})
		default:
			return nil, fmt.Errorf("avro field %q of the reader's schema is not in the writer's record, has no default and cannot be null", rf.t.path)
		}
	}
	return c, nil
}

// readerField returns the index of the reader's field that reads the writer's field name: the
// field of that name, else one with it among its aliases; -1 when there is none left.
func readerField(r *avroType, name string, used []bool) int {
	for j, f := range r.fields {
		if f.name == name && !used[j] {
			return j
		}
	}
	for j, f := range r.fields {
		if slices.Contains(f.aliases, name) && !used[j] {
			return j
		}
	}
	return -1
}

// defaultValue converts a field's default, as hamba/avro parsed it from the schema's JSON, to
// the row value the decoder gives for that type.
func defaultValue(t *avroType, v any) (any, error) {
	if v == nil {
		if t.nullable {
			return nil, nil
		}
		return nil, fmt.Errorf("null is not a %s", t.describe())
	}
	bad := func() (any, error) { return nil, fmt.Errorf("%v is not a %s", v, t.describe()) }
	switch t.kind {
	case avroBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case avroInt, avroLong, avroDate, avroTimestampMillis, avroTimestampMicros:
		n, ok := toInt64(v)
		if !ok {
			return bad()
		}
		switch t.kind {
		case avroDate:
			return time.Unix(n*86400, 0).UTC(), nil
		case avroTimestampMillis:
			return time.UnixMilli(n).UTC(), nil
		case avroTimestampMicros:
			return time.UnixMicro(n).UTC(), nil
		}
		return n, nil
	case avroFloat, avroDouble:
		if f, ok := toFloat64(v); ok {
			return f, nil
		}
	case avroString, avroEnum:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case avroBytes, avroFixed, avroDecimalBytes, avroDecimalFixed:
		b, ok := bytesOf(v)
		if !ok {
			return bad()
		}
		if t.kind == avroDecimalBytes || t.kind == avroDecimalFixed {
			return decimalOf(b, t.scale), nil
		}
		return b, nil
	case avroArray:
		items, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(items))
		for i, it := range items {
			var err error
			if out[i], err = defaultValue(t.elem, it); err != nil {
				return nil, err
			}
		}
		return out, nil
	case avroMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(m))
		for k, it := range m {
			var err error
			if out[k], err = defaultValue(t.elem, it); err != nil {
				return nil, err
			}
		}
		return out, nil
	case avroRecord:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			fv, ok := m[f.name]
			switch {
			case ok:
				var err error
				if out[f.name], err = defaultValue(f.t, fv); err != nil {
					return nil, err
				}
			case f.hasDef:
				out[f.name] = f.def
			default:
				return nil, fmt.Errorf("the default of record %q has no value for field %q", t.path, f.name)
			}
		}
		return out, nil
	}
	return bad()
}

// bytesOf returns the bytes of a bytes or fixed default: hamba/avro gives []byte, or a byte
// array for a fixed.
func bytesOf(v any) ([]byte, bool) {
	if b, ok := v.([]byte); ok {
		return b, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Array || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	b := make([]byte, rv.Len())
	reflect.Copy(reflect.ValueOf(b), rv)
	return b, true
}
