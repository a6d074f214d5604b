package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/valyala/fastjson"
)

// JSONDecoder decodes JSON objects into rows of one schema, straight from the bytes and driven
// by the schema. It reuses its parser and scratch buffers between calls, so a JSONDecoder must
// be used by one goroutine at a time: make one per lane. The rows it returns share no memory
// with the input or with each other.
type JSONDecoder struct {
	schema  *Schema
	plan    *decPlan
	parser  fastjson.Parser
	num     []byte  // the text of the number being converted
	scratch [][]any // field values of the structs being decoded, one slice per depth
	sc      scanner // the fast path's (json_scan.go)
	items   [][]any // elements of the arrays being scanned, one slice per depth
	// misses counts the records in a row the fast path gave up on; skip, the records still
	// to send straight to the checked path after scanMisses of them.
	misses, skip int
}

// A stream whose records the fast path keeps giving up on (a producer that writes raw tabs in
// strings, a topic of bad records) would pay for two decodes per record: after scanMisses
// misses in a row, the next scanPause records take the checked path alone.
const (
	scanMisses = 16
	scanPause  = 4096
)

// decPlan is a type prepared for decoding: field lookups resolved once, not per record.
type decPlan struct {
	t      *Type
	fields []fieldPlan // Struct and the top level
	index  map[string]int
	elem   *decPlan     // Array and Map
	strs   *stringCache // String
}

type fieldPlan struct {
	name     string
	nullable bool
	plan     *decPlan
}

// NewJSONDecoder returns a decoder for objects of schema s.
func NewJSONDecoder(s *Schema) *JSONDecoder {
	return &JSONDecoder{schema: s, plan: planStruct(&Type{Kind: Struct, Fields: s.Fields})}
}

func planType(t *Type) *decPlan {
	switch t.Kind {
	case Struct:
		return planStruct(t)
	case Array, Map:
		return &decPlan{t: t, elem: planType(elemOf(t))}
	case String:
		return &decPlan{t: t, strs: &stringCache{}}
	}
	return &decPlan{t: t}
}

func planStruct(t *Type) *decPlan {
	p := &decPlan{t: t, fields: make([]fieldPlan, len(t.Fields)), index: make(map[string]int, len(t.Fields))}
	for i := range t.Fields {
		f := &t.Fields[i]
		p.fields[i] = fieldPlan{name: f.Name, nullable: f.Nullable, plan: planType(&f.Type)}
		p.index[f.Name] = i
	}
	return p
}

// Decode decodes one JSON object into a row aligned with the decoder's schema. Unknown
// properties are ignored; a missing property reads as null. The error is a *FieldError naming
// the field when a value does not fit its type, and says where when data is not valid JSON,
// invalid UTF-8 included: a bad record is not repaired into one that says something else.
func (d *JSONDecoder) Decode(data []byte) (Row, error) {
	if d.skip > 0 {
		d.skip--
	} else if row, ok := d.scan(data); ok {
		d.misses = 0
		return row, nil
	} else if d.misses++; d.misses == scanMisses {
		d.misses, d.skip = 0, scanPause
	}
	return d.DecodeChecked(data)
}

// DecodeChecked is Decode's checked path, for the records the fast path (scan) gives up on:
// fastjson validates the record, then parses it into a tree that is converted to a row. It
// decides what is accepted and says why a record is not. It was Decode before the fast path;
// it is exported for the bench harness, which measures both.
func (d *JSONDecoder) DecodeChecked(data []byte) (Row, error) {
	if err := fastjson.ValidateBytes(data); err != nil {
		return nil, syntaxError(data, err)
	}
	if !utf8.Valid(data) {
		return nil, invalidUTF8(data)
	}
	v, err := d.parser.ParseBytes(data)
	if err != nil {
		return nil, syntaxError(data, err)
	}
	if v.Type() != fastjson.TypeObject {
		sc := d.scalarOf(v)
		return nil, fmt.Errorf("want a JSON object, got %s", sc.describe())
	}
	o, _ := v.Object()
	row := make(Row, len(d.plan.fields))
	if err := d.decodeObject(o, d.plan, row, 0); err != nil {
		return nil, err
	}
	return row, nil
}

// syntaxError reports where data stops being JSON. fastjson does not say at which byte, so
// the rare failing input is scanned again by encoding/json, which does.
func syntaxError(data []byte, parseErr error) error {
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, se)
	}
	return fmt.Errorf("invalid JSON: %w", parseErr)
}

// invalidUTF8 says where data, which is not valid UTF-8, stops being so, counting bytes as
// syntaxError does. JSON text is UTF-8 (RFC 8259); fastjson does not check it.
func invalidUTF8(data []byte) error {
	at := 0
	for at < len(data) {
		r, n := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return fmt.Errorf("invalid JSON at byte %d: invalid UTF-8 (byte 0x%02x); JSON text must be UTF-8", at+1, data[at])
}

// decodeObject decodes the properties of o that are fields of p into vals, by field position.
func (d *JSONDecoder) decodeObject(o *fastjson.Object, p *decPlan, vals []any, depth int) error {
	var err error
	next := 0 // records usually list fields in schema order: try the next one before hashing
	o.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		i := -1
		if next < len(p.fields) && string(key) == p.fields[next].name {
			i = next
		} else if j, ok := p.index[string(key)]; ok {
			i = j
		} else {
			return
		}
		next = i + 1
		f := &p.fields[i]
		val, e := d.value(v, f.plan, depth)
		if e != nil {
			err = inField(e, f.name)
			return
		}
		if val == nil && !f.nullable {
			err = inField(mismatch(f.plan.t, &scalar{kind: sNull}, ""), f.name)
			return
		}
		vals[i] = val
	})
	if err != nil {
		return err
	}
	for i := range p.fields {
		// A null for a field that is not nullable failed above: nil here means missing.
		if vals[i] == nil && !p.fields[i].nullable {
			return inField(errNotNullable, p.fields[i].name)
		}
	}
	return nil
}

// value converts one JSON value to the representation of p's type.
func (d *JSONDecoder) value(v *fastjson.Value, p *decPlan, depth int) (any, error) {
	jt := v.Type()
	if jt == fastjson.TypeNull {
		return nil, nil
	}
	switch p.t.Kind {
	case Array:
		if jt != fastjson.TypeArray {
			break
		}
		items, _ := v.Array()
		out := make([]any, len(items))
		for i, item := range items {
			c, err := d.value(item, p.elem, depth+1)
			if err != nil {
				return nil, inIndex(err, i)
			}
			out[i] = c
		}
		return out, nil
	case Struct:
		if jt != fastjson.TypeObject {
			break
		}
		o, _ := v.Object()
		vals := d.scratchFor(depth, len(p.fields))
		defer clear(vals)
		if err := d.decodeObject(o, p, vals, depth+1); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(p.fields))
		for i := range p.fields {
			m[p.fields[i].name] = vals[i]
		}
		return m, nil
	case Map:
		if jt != fastjson.TypeObject {
			break
		}
		o, _ := v.Object()
		return d.decodeMap(o, p.elem, depth)
	case Any:
		return d.anyValue(v)
	default:
		sc := d.scalarOf(v)
		if p.strs != nil && sc.kind == sString {
			return p.strs.get(sc.text), nil
		}
		out, err := convertScalar(&sc, p.t)
		if err != nil {
			return nil, &FieldError{Err: err}
		}
		return out, nil
	}
	sc := d.scalarOf(v)
	return nil, &FieldError{Err: mismatch(p.t, &sc, "")}
}

func (d *JSONDecoder) decodeMap(o *fastjson.Object, elem *decPlan, depth int) (map[string]any, error) {
	m := make(map[string]any, o.Len())
	var err error
	o.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		c, e := d.value(v, elem, depth+1)
		if e != nil {
			err = inField(e, string(key))
			return
		}
		m[string(key)] = c
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// anyValue converts a JSON value to plain Go values.
func (d *JSONDecoder) anyValue(v *fastjson.Value) (any, error) {
	switch v.Type() {
	case fastjson.TypeArray:
		items, _ := v.Array()
		out := make([]any, len(items))
		for i, item := range items {
			c, err := d.anyValue(item)
			if err != nil {
				return nil, inIndex(err, i)
			}
			out[i] = c
		}
		return out, nil
	case fastjson.TypeObject:
		o, _ := v.Object()
		m := make(map[string]any, o.Len())
		var err error
		o.Visit(func(key []byte, item *fastjson.Value) {
			if err != nil {
				return
			}
			c, e := d.anyValue(item)
			if e != nil {
				err = inField(e, string(key))
				return
			}
			m[string(key)] = c
		})
		return m, err
	}
	sc := d.scalarOf(v)
	if sc.kind == sNumber && !isJSONNumber(sc.text) {
		return nil, &FieldError{Err: fmt.Errorf("invalid number %q", clip(sc.text))}
	}
	out, err := toAnyScalar(&sc)
	if err != nil {
		return nil, &FieldError{Err: err}
	}
	return out, nil
}

func (d *JSONDecoder) scratchFor(depth, n int) []any {
	for len(d.scratch) <= depth {
		d.scratch = append(d.scratch, nil)
	}
	if cap(d.scratch[depth]) < n {
		d.scratch[depth] = make([]any, n)
	}
	return d.scratch[depth][:n]
}

// scalarOf classifies a JSON value. Its text points into the parser's buffers (borrowed) and
// is valid until the next call.
func (d *JSONDecoder) scalarOf(v *fastjson.Value) scalar {
	switch v.Type() {
	case fastjson.TypeNull:
		return scalar{kind: sNull}
	case fastjson.TypeTrue:
		return scalar{kind: sBool, b: true}
	case fastjson.TypeFalse:
		return scalar{kind: sBool}
	case fastjson.TypeNumber:
		d.num = v.MarshalTo(d.num[:0])
		return scalar{kind: sNumber, text: bytesView(d.num), borrowed: true}
	case fastjson.TypeString:
		b, _ := v.StringBytes() // valid UTF-8: Decode checked the record, and unescaping keeps it so
		return scalar{kind: sString, text: bytesView(b), borrowed: true}
	case fastjson.TypeArray:
		return scalar{kind: sArray}
	}
	return scalar{kind: sObject}
}

// bytesView returns b as a string without copying; the caller must not keep it past b's reuse.
func bytesView(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringCache hands out the same boxed string for a value it has seen before, so the repeated
// values of low-cardinality fields (country, platform, status) cost no allocation. Strings are
// immutable, so rows may share them. A field whose values rarely repeat (ids) stops using it.
type stringCache struct {
	m             map[string]any
	lookups, hits int
	off           bool
}

const (
	internMaxLen     = 128  // longer strings are rarely repeated values
	internMaxEntries = 256  // per field and decoder
	internWindow     = 4096 // lookups between checks of the hit rate
)

// get returns s (which may be borrowed) as a boxed string of its own.
func (c *stringCache) get(s string) any {
	if c.off || len(s) > internMaxLen {
		return strings.Clone(s)
	}
	c.lookups++
	if c.lookups == internWindow {
		if c.hits < internWindow/4 {
			c.off, c.m = true, nil // mostly distinct values: caching only costs
			return strings.Clone(s)
		}
		c.lookups, c.hits = 0, 0
	}
	if v, ok := c.m[s]; ok {
		c.hits++
		return v
	}
	var v any = strings.Clone(s)
	if len(c.m) < internMaxEntries {
		if c.m == nil {
			c.m = make(map[string]any)
		}
		c.m[v.(string)] = v
	}
	return v
}
