package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/internal/diag"
)

// SchemaError is a mistake in a schema definition. Path names the property it is in
// ("user.age"; "tags[]" are the items of array tags, "attrs.*" the values of map attrs) and is
// empty for the schema as a whole. Line and Column locate it in the YAML file the schema node
// came from, when known (zero otherwise: Column is unknown inside JSON text written as a block).
type SchemaError struct {
	Path   string
	Line   int
	Column int
	Msg    string
}

// Error renders the error as `schema property "user.age": unknown type "int" ...`, without the
// position, which the caller prints in its own form.
func (e *SchemaError) Error() string {
	if e.Path == "" {
		return "schema: " + e.Msg
	}
	return fmt.Sprintf("schema property %q: %s", e.Path, e.Msg)
}

// Limits that keep a hostile schema from exhausting the process.
const (
	maxSchemaDepth = 64
	maxSchemaNodes = 100000
)

// ParseJSONSchema reads Beam's subset of JSON Schema into a Schema. n is either a YAML mapping
// written inline in the pipeline file or a scalar holding the schema as JSON text (commonly a
// "|" block). The root must be "type: object" with "properties"; fields keep the order they are
// written in, and a field not listed in "required" is nullable. See docs/schemas.md for the
// types understood. Errors are *SchemaError.
func ParseJSONSchema(n *yaml.Node) (*Schema, error) {
	p := &jsParser{}
	root, err := p.root(n)
	if err != nil {
		return nil, err
	}
	if err := p.expectObjectRoot(root); err != nil {
		return nil, err
	}
	t, _, err := p.parse(root, "", 0)
	if err != nil {
		return nil, err
	}
	return New(t.Fields...), nil
}

// jsParser walks a JSON Schema. When the schema is JSON text, its nodes' positions are
// relative to that text: text is the scalar it came from.
type jsParser struct {
	text  *yaml.Node
	nodes int
}

func (p *jsParser) errAt(n *yaml.Node, path, format string, args ...any) error {
	e := &SchemaError{Path: path, Msg: fmt.Sprintf(format, args...)}
	switch {
	case p.text == nil && n != nil:
		e.Line, e.Column = n.Line, n.Column
	case p.text != nil && n != nil && p.text.Style == yaml.LiteralStyle:
		// A literal block's text starts on the line after the "|"; its indentation is unknown.
		e.Line = p.text.Line + n.Line
	case p.text != nil:
		e.Line, e.Column = p.text.Line, p.text.Column
	}
	return e
}

// root finds the schema mapping, parsing JSON text when n is a scalar.
func (p *jsParser) root(n *yaml.Node) (*yaml.Node, error) {
	n = p.deref(n)
	if n == nil {
		return nil, p.errAt(nil, "", "missing")
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = p.deref(n.Content[0])
	}
	if n.Kind != yaml.ScalarNode {
		return n, nil
	}
	p.text = n
	text := n.Value // not trimmed: line numbers inside it must stay those of the file
	if trimmed := strings.TrimSpace(text); !strings.HasPrefix(trimmed, "{") {
		return nil, p.errAt(nil, "", "want a JSON Schema object, as a mapping or as JSON text, got %q", clip(trimmed))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		// Valid JSON that YAML refuses (tabs used as indentation): compact it and try again.
		var compact bytes.Buffer
		if jerr := json.Unmarshal([]byte(text), new(json.RawMessage)); jerr != nil {
			var se *json.SyntaxError
			if errors.As(jerr, &se) {
				line := 1 + strings.Count(text[:min(int(se.Offset), len(text))], "\n")
				return nil, p.errAt(&yaml.Node{Line: line}, "", "invalid JSON at byte %d: %v", se.Offset, se)
			}
			return nil, p.errAt(nil, "", "invalid JSON: %v", jerr)
		}
		if err := json.Compact(&compact, []byte(text)); err != nil {
			return nil, p.errAt(nil, "", "invalid JSON: %v", err)
		}
		doc = yaml.Node{}
		if err := yaml.Unmarshal(compact.Bytes(), &doc); err != nil {
			return nil, p.errAt(nil, "", "invalid JSON: %v", err)
		}
	}
	if len(doc.Content) != 1 {
		return nil, p.errAt(nil, "", "want one JSON object")
	}
	return p.deref(doc.Content[0]), nil
}

// deref follows YAML aliases. An alias that leads nowhere reads as null.
func (p *jsParser) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i == 100 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
		}
		n = n.Alias
	}
	return n
}

func (p *jsParser) expectObjectRoot(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return p.errAt(n, "", "want a mapping with \"type: object\" and \"properties\"")
	}
	var typ, props *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "type":
			typ = p.deref(n.Content[i+1])
		case "properties":
			props = n.Content[i+1]
		}
	}
	if typ == nil || typ.Kind != yaml.ScalarNode || typ.Value != "object" {
		return p.errAt(n, "", "the root must be \"type: object\" with \"properties\"")
	}
	if props == nil {
		return p.errAt(n, "", "the root object has no \"properties\"")
	}
	return nil
}

// schemaKeywords are the JSON Schema keywords this parser reads.
var schemaKeywords = []string{"type", "format", "contentEncoding", "properties", "required",
	"items", "additionalProperties", "nullable", "anyOf", "oneOf"}

// ignoredKeywords are keywords that describe or validate values without changing their type.
var ignoredKeywords = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "enum": true, "const": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true, "minLength": true,
	"maxLength": true, "pattern": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "contentMediaType": true, "contains": true,
	"minContains": true, "maxContains": true, "propertyNames": true, "dependentRequired": true,
	"example": true,
}

// unsupportedKeywords change the shape of values in ways a row type cannot hold.
var unsupportedKeywords = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true, "allOf": true, "not": true, "if": true,
	"then": true, "else": true, "prefixItems": true, "patternProperties": true,
	"dependentSchemas": true, "unevaluatedProperties": true, "unevaluatedItems": true,
}

// jsKeys are the keywords of one schema mapping.
type jsKeys struct {
	typ, format, encoding, props, required, items, additional, nullable, alternatives *yaml.Node
}

// parse reads the schema mapping n at path into a type, and whether its type admits null.
func (p *jsParser) parse(n *yaml.Node, path string, depth int) (Type, bool, error) {
	n = p.deref(n)
	if depth > maxSchemaDepth {
		return Type{}, false, p.errAt(n, path, "nested deeper than %d levels", maxSchemaDepth)
	}
	if p.nodes++; p.nodes > maxSchemaNodes {
		return Type{}, false, p.errAt(n, path, "more than %d schema nodes", maxSchemaNodes)
	}
	if n.Kind != yaml.MappingNode {
		return Type{}, false, p.errAt(n, path, "want a schema mapping such as {type: string}, got %s", nodeDesc(n))
	}
	k, err := p.keys(n, path)
	if err != nil {
		return Type{}, false, err
	}
	if k.alternatives != nil {
		return p.alternatives(k.alternatives, path, depth)
	}
	if k.required != nil && k.required.Kind != yaml.SequenceNode {
		return Type{}, false, p.errAt(k.required, path, "\"required\" must be a list of property names")
	}
	name, nullable, err := p.typeName(k, path)
	if err != nil {
		return Type{}, false, err
	}
	if k.nullable != nil && k.nullable.Value == "true" {
		nullable = true
	}
	var t Type
	switch name {
	case "boolean":
		t.Kind = Bool
	case "integer":
		t.Kind = Int64
	case "number":
		t.Kind = Float64
	case "string":
		t.Kind, err = p.stringKind(k, path)
	case "array":
		t, err = p.array(k, path, depth)
	case "object":
		t, err = p.object(k, path, depth)
	default:
		t.Kind = Any
	}
	return t, nullable, err
}

// keys collects the keywords of n, rejecting duplicates, unsupported keywords and near-misses
// of the keywords read.
func (p *jsParser) keys(n *yaml.Node, path string) (jsKeys, error) {
	var k jsKeys
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			return k, p.errAt(key, path, "keyword %q is given twice", key.Value)
		}
		seen[key.Value] = true
		switch key.Value {
		case "type":
			k.typ = p.deref(val)
		case "format":
			k.format = p.deref(val)
		case "contentEncoding":
			k.encoding = p.deref(val)
		case "properties":
			k.props = p.deref(val)
		case "required":
			k.required = p.deref(val)
		case "items":
			k.items = p.deref(val)
		case "additionalProperties":
			k.additional = p.deref(val)
		case "nullable":
			k.nullable = p.deref(val)
		case "anyOf", "oneOf":
			k.alternatives = p.deref(val)
		default:
			switch {
			case unsupportedKeywords[key.Value]:
				return k, p.errAt(key, path, "keyword %q is not supported: write the type out in full", key.Value)
			case ignoredKeywords[key.Value]:
			default:
				if s := diag.Suggest(key.Value, schemaKeywords); s != "" {
					return k, p.errAt(key, path, "unknown keyword %q (did you mean %q?)", key.Value, s)
				}
			}
		}
	}
	return k, nil
}

// typeNames are the JSON Schema types, and typeHints what users coming from other type
// systems write instead.
var (
	typeNames = []string{"boolean", "integer", "number", "string", "array", "object", "null"}
	typeHints = map[string]string{
		"int": "integer", "long": "integer", "int32": "integer", "int64": "integer", "short": "integer",
		"float": "number", "double": "number", "decimal": "number", "float64": "number",
		"bool": "boolean", "str": "string", "text": "string", "list": "array",
		"dict": "object", "map": "object", "record": "object", "struct": "object",
		"timestamp": `"string" with "format: date-time"`, "datetime": `"string" with "format: date-time"`,
		"date-time": `"string" with "format: date-time"`, "date": `"string" with "format: date"`,
		"bytes": `"string" with "contentEncoding: base64"`, "binary": `"string" with "contentEncoding: base64"`,
	}
)

// typeName reads "type": one name, or a list of one name and "null". Without "type" the
// other keywords decide, and a schema with none of them holds any JSON value.
func (p *jsParser) typeName(k jsKeys, path string) (string, bool, error) {
	if k.typ == nil {
		switch {
		case k.props != nil || k.additional != nil:
			return "object", false, nil
		case k.items != nil:
			return "array", false, nil
		}
		return "", false, nil
	}
	var names []*yaml.Node
	switch k.typ.Kind {
	case yaml.ScalarNode:
		names = []*yaml.Node{k.typ}
	case yaml.SequenceNode:
		names = k.typ.Content
	default:
		return "", false, p.errAt(k.typ, path, "\"type\" must be a type name or a list of them")
	}
	name, nullable := "", false
	for _, tn := range names {
		tn = p.deref(tn)
		if tn.Kind != yaml.ScalarNode {
			return "", false, p.errAt(tn, path, "\"type\" must be a type name or a list of them")
		}
		v := tn.Value
		if tn.Tag == "!!null" {
			v = "null" // an unquoted null in a YAML list
		}
		switch {
		case v == "null":
			nullable = true
		case !contains(typeNames, v):
			hint := typeHints[v]
			if hint == "" {
				hint = typeHints[strings.ToLower(v)]
			}
			if hint == "" {
				hint = diag.Suggest(v, typeNames)
				if hint != "" {
					hint = fmt.Sprintf("%q", hint)
				}
			} else if !strings.HasPrefix(hint, `"`) {
				hint = fmt.Sprintf("%q", hint)
			}
			if hint != "" {
				return "", false, p.errAt(tn, path, "unknown type %q (did you mean %s?)", v, hint)
			}
			return "", false, p.errAt(tn, path, "unknown type %q (the types are %s)", v, strings.Join(typeNames, ", "))
		case name != "":
			return "", false, p.errAt(tn, path, "a type list may hold one type and \"null\", got %q and %q", name, v)
		default:
			name = v
		}
	}
	if name == "" {
		return "", false, p.errAt(k.typ, path, "type \"null\" alone holds no values")
	}
	return name, nullable, nil
}

// alternatives reads anyOf/oneOf in the one form a row type can hold: a type and null.
func (p *jsParser) alternatives(n *yaml.Node, path string, depth int) (Type, bool, error) {
	const msg = "anyOf and oneOf are supported only as [{type: T}, {type: \"null\"}]"
	if n.Kind != yaml.SequenceNode {
		return Type{}, false, p.errAt(n, path, msg)
	}
	var (
		t        Type
		found    bool
		nullable bool
	)
	for _, alt := range n.Content {
		alt = p.deref(alt)
		if isNullSchema(alt) {
			nullable = true
			continue
		}
		if found {
			return Type{}, false, p.errAt(alt, path, msg)
		}
		var (
			err     error
			altNull bool
		)
		t, altNull, err = p.parse(alt, path, depth+1)
		if err != nil {
			return Type{}, false, err
		}
		found, nullable = true, nullable || altNull
	}
	if !found {
		return Type{}, false, p.errAt(n, path, msg)
	}
	return t, nullable, nil
}

func isNullSchema(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != "type" {
		return false
	}
	v := n.Content[1]
	return v.Kind == yaml.ScalarNode && (v.Value == "null" || v.Tag == "!!null")
}

func (p *jsParser) stringKind(k jsKeys, path string) (Kind, error) {
	if k.encoding != nil {
		switch k.encoding.Value {
		case "base64":
			return Bytes, nil
		default:
			return 0, p.errAt(k.encoding, path, "contentEncoding %q is not supported (only base64)", k.encoding.Value)
		}
	}
	if k.format != nil {
		switch k.format.Value {
		case "date-time":
			return Timestamp, nil
		case "date":
			return Date, nil
		case "byte":
			return Bytes, nil
		}
	}
	return String, nil
}

func (p *jsParser) array(k jsKeys, path string, depth int) (Type, error) {
	t := Type{Kind: Array, Elem: &Type{Kind: Any}}
	if k.items == nil {
		return t, nil
	}
	if k.items.Kind == yaml.SequenceNode {
		return t, p.errAt(k.items, path, "tuple \"items\" (a list of schemas) are not supported: give one schema")
	}
	elem, _, err := p.parse(k.items, path+"[]", depth+1)
	if err != nil {
		return t, err
	}
	t.Elem = &elem
	return t, nil
}

func (p *jsParser) object(k jsKeys, path string, depth int) (Type, error) {
	if k.props != nil {
		return p.properties(k, path, depth)
	}
	t := Type{Kind: Map, Elem: &Type{Kind: Any}}
	switch a := k.additional; {
	case a == nil || (a.Kind == yaml.ScalarNode && a.Value == "true"):
	case a.Kind == yaml.ScalarNode && a.Value == "false":
		return t, p.errAt(a, path, "an object without properties and with \"additionalProperties: false\" holds nothing")
	default:
		elem, _, err := p.parse(a, join(path, "*"), depth+1)
		if err != nil {
			return t, err
		}
		t.Elem = &elem
	}
	return t, nil
}

func (p *jsParser) properties(k jsKeys, path string, depth int) (Type, error) {
	props := k.props
	if props.Kind != yaml.MappingNode {
		return Type{}, p.errAt(props, path, "\"properties\" must be a mapping of property names to schemas")
	}
	t := Type{Kind: Struct, Fields: make([]Field, 0, len(props.Content)/2)}
	byType := make([]bool, 0, len(props.Content)/2) // whether each field's type admits null
	for i := 0; i+1 < len(props.Content); i += 2 {
		key := props.Content[i]
		name := key.Value
		if key.Kind != yaml.ScalarNode || name == "" {
			return Type{}, p.errAt(key, path, "property names must be non-empty strings")
		}
		fpath := join(path, name)
		for _, f := range t.Fields {
			if f.Name == name {
				return Type{}, p.errAt(key, fpath, "defined twice")
			}
		}
		ft, nullable, err := p.parse(props.Content[i+1], fpath, depth+1)
		if err != nil {
			return Type{}, err
		}
		t.Fields = append(t.Fields, Field{Name: name, Type: ft, Nullable: true})
		byType = append(byType, nullable)
	}
	if k.required == nil {
		return t, nil
	}
	req := k.required
	names := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = f.Name
	}
	for _, r := range req.Content {
		r = p.deref(r)
		i := indexOf(names, r.Value)
		if r.Kind != yaml.ScalarNode || i < 0 {
			return Type{}, p.errAt(r, path, "required property %q is not in \"properties\"%s", r.Value, diag.DidYouMean(r.Value, names))
		}
		t.Fields[i].Nullable = byType[i]
	}
	return t, nil
}

// join appends a property name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

// nodeDesc describes a YAML node for an error message.
func nodeDesc(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", clip(n.Value))
	}
	return "a mapping"
}
