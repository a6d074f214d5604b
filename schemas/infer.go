package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"time"

	"gopkg.in/yaml.v3"
)

// Infer returns a schema that holds every one of the sample records (Create's elements, the
// first lines of a JSON file). Fields come in order of first appearance; as a Go map has no
// order, the keys a sample adds are taken in sorted order (InferJSONLines and InferYAML keep
// the written order). A field missing from a sample or null in one is nullable; integers and
// floats together make Float64; other mixed kinds make Any; nested maps are Structs inferred
// the same way; lists are Arrays of their elements' unified type (Any when always empty);
// time.Time is Timestamp and []byte Bytes. A field that is always null is a nullable Any.
func Infer(samples []map[string]any) (*Schema, error) {
	values := make([]any, len(samples))
	for i, s := range samples {
		values[i] = s
	}
	return inferRecords(values, func(i int) string { return fmt.Sprintf("sample %d", i+1) })
}

// InferJSONLines infers a schema from lines that each hold a JSON object, as Infer does, with
// fields in the order the lines write them. Whole numbers written without a fraction or
// exponent are Int64, other numbers Float64. Blank lines are skipped.
func InferJSONLines(lines [][]byte) (*Schema, error) {
	values := make([]any, 0, len(lines))
	lineNo := make([]int, 0, len(lines))
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		v, err := readJSONOrdered(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		values = append(values, v)
		lineNo = append(lineNo, i+1)
	}
	return inferRecords(values, func(i int) string { return fmt.Sprintf("line %d", lineNo[i]) })
}

// InferYAML infers a schema from YAML mappings (Create's elements as written), as Infer does,
// with fields in the order the mappings write them. Unquoted YAML timestamps are Timestamp, and
// Date when written as a date alone (2024-01-31).
func InferYAML(elements []*yaml.Node) (*Schema, error) {
	values := make([]any, len(elements))
	budget := maxYAMLNodes
	for i, n := range elements {
		v, err := yamlOrdered(n, 0, &budget)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		values[i] = v
	}
	return inferRecords(values, func(i int) string { return fmt.Sprintf("element %d", i+1) })
}

// orderedObject is an object that remembers the order of its keys.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o *orderedObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// dateOnly is a YAML timestamp written as a date alone (2024-01-31).
type dateOnly time.Time

// inferred is a type being inferred. known is false while only nulls (or empty lists, for an
// element type) have been seen.
type inferred struct {
	known  bool
	kind   Kind
	elem   *inferred
	fields []inferredField
}

type inferredField struct {
	name     string
	t        inferred
	nullable bool
}

const maxInferDepth = 1000

func inferRecords(values []any, name func(int) string) (*Schema, error) {
	if len(values) == 0 {
		return nil, errors.New("no samples to infer a schema from")
	}
	var acc inferred
	for i, v := range values {
		t, err := inferValue(v, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name(i), err)
		}
		if !t.known {
			return nil, fmt.Errorf("%s: want an object, got null", name(i))
		}
		if t.kind != Struct {
			return nil, fmt.Errorf("%s: want an object, got %s", name(i), t.kind)
		}
		acc = unify(acc, t)
	}
	return New(acc.final().Fields...), nil
}

// inferValue returns the type of one value; a null has an unknown type.
func inferValue(v any, depth int) (inferred, error) {
	if depth > maxInferDepth {
		return inferred{}, fmt.Errorf("nested deeper than %d levels", maxInferDepth)
	}
	switch x := v.(type) {
	case *orderedObject:
		return inferObject(x.keys, x.vals, depth)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return inferObject(keys, x, depth)
	case map[any]any:
		m, err := stringMap(x, &anyType)
		if err != nil {
			return inferred{}, err
		}
		return inferValue(m, depth)
	case []any:
		t := inferred{known: true, kind: Array, elem: &inferred{}}
		for i, e := range x {
			et, err := inferValue(e, depth+1)
			if err != nil {
				return inferred{}, inIndex(err, i)
			}
			*t.elem = unify(*t.elem, et)
		}
		return t, nil
	case []string:
		return inferred{known: true, kind: Array, elem: &inferred{known: true, kind: String}}, nil
	case time.Time:
		return inferred{known: true, kind: Timestamp}, nil
	case dateOnly:
		return inferred{known: true, kind: Date}, nil
	case []byte:
		return inferred{known: true, kind: Bytes}, nil
	case json.Number:
		if !isJSONNumber(string(x)) {
			return inferred{}, &FieldError{Err: fmt.Errorf("invalid number %q", clip(string(x)))}
		}
		if _, err := x.Int64(); err == nil {
			return inferred{known: true, kind: Int64}, nil
		}
		return inferred{known: true, kind: Float64}, nil
	case *big.Rat:
		if x == nil {
			return inferred{}, nil
		}
		return inferred{known: true, kind: Float64}, nil
	}
	sc := toScalar(v)
	switch sc.kind {
	case sNull:
		return inferred{}, nil
	case sBool:
		return inferred{known: true, kind: Bool}, nil
	case sInt:
		return inferred{known: true, kind: Int64}, nil
	case sNumber:
		return inferred{known: true, kind: Float64}, nil // an integer beyond int64
	case sFloat:
		return inferred{known: true, kind: Float64}, nil
	case sString:
		return inferred{known: true, kind: String}, nil
	}
	return inferred{}, &FieldError{Err: errors.New("cannot infer a type from an unsupported value")}
}

func inferObject(keys []string, vals map[string]any, depth int) (inferred, error) {
	t := inferred{known: true, kind: Struct, fields: make([]inferredField, 0, len(keys))}
	for _, k := range keys {
		ft, err := inferValue(vals[k], depth+1)
		if err != nil {
			return inferred{}, inField(err, k)
		}
		t.fields = append(t.fields, inferredField{name: k, t: ft, nullable: !ft.known})
	}
	return t, nil
}

// unify returns a type that holds the values of both.
func unify(a, b inferred) inferred {
	switch {
	case !a.known:
		return b
	case !b.known:
		return a
	case a.kind == Any || b.kind == Any:
		return inferred{known: true, kind: Any}
	case a.kind == b.kind:
		switch a.kind {
		case Array:
			elem := unify(*a.elem, *b.elem)
			return inferred{known: true, kind: Array, elem: &elem}
		case Struct:
			return inferred{known: true, kind: Struct, fields: unifyFields(a.fields, b.fields)}
		}
		return a
	case (a.kind == Int64 && b.kind == Float64) || (a.kind == Float64 && b.kind == Int64):
		return inferred{known: true, kind: Float64}
	}
	return inferred{known: true, kind: Any}
}

// unifyFields merges the fields of two structs: a field missing from either is nullable.
func unifyFields(a, b []inferredField) []inferredField {
	out := make([]inferredField, 0, max(len(a), len(b)))
	for _, fa := range a {
		f := fa
		f.nullable = true
		for _, fb := range b {
			if fb.name == fa.name {
				f = inferredField{name: fa.name, t: unify(fa.t, fb.t), nullable: fa.nullable || fb.nullable}
				break
			}
		}
		out = append(out, f)
	}
	for _, fb := range b {
		found := false
		for _, fa := range a {
			if fa.name == fb.name {
				found = true
				break
			}
		}
		if !found {
			fb.nullable = true
			out = append(out, fb)
		}
	}
	return out
}

// final turns the inferred type into a Type; unknown types become Any.
func (t inferred) final() Type {
	if !t.known {
		return Type{Kind: Any}
	}
	out := Type{Kind: t.kind}
	switch t.kind {
	case Array:
		elem := t.elem.final()
		out.Elem = &elem
	case Struct:
		out.Fields = make([]Field, len(t.fields))
		for i, f := range t.fields {
			out.Fields[i] = Field{Name: f.name, Type: f.t.final(), Nullable: f.nullable || !f.t.known}
		}
	}
	return out
}

// readJSONOrdered parses one JSON value, keeping the key order of objects and numbers as
// json.Number.
func readJSONOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readOrdered(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more data after the value")
	}
	return v, nil
}

func readOrdered(dec *json.Decoder, depth int) (any, error) {
	if depth > maxInferDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxInferDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		o := &orderedObject{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			k, _ := kt.(string)
			v, err := readOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(k, v)
		}
		_, err = dec.Token() // '}'
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return o, nil
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return arr, nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected %v", delim)
}

// maxYAMLNodes bounds the nodes InferYAML visits, aliases expanded.
const maxYAMLNodes = 1 << 20

// yamlOrdered converts a YAML node to plain values, keeping the key order of mappings.
func yamlOrdered(n *yaml.Node, depth int, budget *int) (any, error) {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("more than %d YAML values, aliases expanded", maxYAMLNodes)
	}
	if n == nil || n.Kind == yaml.AliasNode || depth > maxInferDepth {
		return nil, errors.New("unsupported YAML value")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, errors.New("want one YAML value")
		}
		return yamlOrdered(n.Content[0], depth, budget)
	case yaml.MappingNode:
		o := &orderedObject{vals: map[string]any{}}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlOrdered(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			o.set(n.Content[i].Value, v)
		}
		return o, nil
	case yaml.SequenceNode:
		arr := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := yamlOrdered(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			arr[i] = v
		}
		return arr, nil
	}
	if n.Tag == "!!timestamp" {
		if d, err := time.Parse(time.DateOnly, n.Value); err == nil {
			return dateOnly(d), nil
		}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return v, nil
}
