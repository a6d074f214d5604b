package schemas

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseJSONSchema(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // Schema.String()
	}{
		{
			name: "every type inline",
			yaml: `
type: object
required: [id, ts]
properties:
  id: {type: integer}
  ts: {type: string, format: date-time}
  day: {type: string, format: date}
  payload: {type: string, contentEncoding: base64}
  score: {type: number, description: "ignored keywords are fine", minimum: 0}
  ok: {type: boolean}
  name: {type: [string, "null"]}
  tags: {type: array, items: {type: string}}
  user:
    type: object
    required: [age]
    properties:
      age: {type: integer}
  attrs: {type: object, additionalProperties: {type: integer}}
  extra: {type: object}
  blob: {}
`,
			want: "{id integer, ts timestamp, day date?, payload bytes?, score number?, ok boolean?, name string?, " +
				"tags array<string>?, user struct<age integer>?, attrs map<string, integer>?, extra map<string, any>?, blob any?}",
		},
		{
			name: "JSON text in a block keeps key order",
			yaml: `|
  {"type": "object", "required": ["z"],
   "properties": {"z": {"type": "string"}, "a": {"type": "integer"}, "m": {"type": "number"}}}
`,
			want: "{z string, a integer?, m number?}",
		},
		{
			name: "JSON text with tab indentation",
			yaml: "\"{\\n\\t\\\"type\\\": \\\"object\\\",\\n\\t\\\"properties\\\": {\\\"a\\\": {\\\"type\\\": \\\"boolean\\\"}}\\n}\"",
			want: "{a boolean?}",
		},
		{
			name: "required but null in the type list stays nullable",
			yaml: `{type: object, required: [a, b], properties: {a: {type: [integer, null]}, b: {type: ["null", string]}}}`,
			want: "{a integer?, b string?}",
		},
		{
			name: "anyOf with null and nullable keyword",
			yaml: `
type: object
required: [a, b, c]
properties:
  a: {anyOf: [{type: string}, {type: "null"}]}
  b: {type: number, nullable: true}
  c: {oneOf: [{type: array, items: {type: integer}}]}
`,
			want: "{a string?, b number?, c array<integer>}",
		},
		{
			name: "types implied by keywords",
			yaml: `{type: object, properties: {a: {items: {type: number}}, b: {properties: {x: {type: string}}}, c: {additionalProperties: true}}}`,
			want: "{a array<number>?, b struct<x string>?, c map<string, any>?}",
		},
		{
			name: "array without items and nested arrays",
			yaml: `{type: object, properties: {a: {type: array}, b: {type: array, items: {type: array, items: {type: string, format: date}}}}}`,
			want: "{a array<any>?, b array<array<date>>?}",
		},
		{
			name: "empty properties",
			yaml: `{type: object, properties: {}}`,
			want: "{}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseJSONSchema(yamlNode(t, tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParseJSONSchemaNestedNullability(t *testing.T) {
	s, err := ParseJSONSchema(yamlNode(t, `
type: object
properties:
  user:
    type: object
    required: [id]
    properties:
      id: {type: integer}
      nick: {type: string}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Type{Kind: Struct, Fields: []Field{
		{Name: "id", Type: Type{Kind: Int64}},
		{Name: "nick", Type: Type{Kind: String}, Nullable: true},
	}}
	f, _ := s.Field("user")
	if !f.Type.Equal(want) || !f.Nullable {
		t.Errorf("user = %+v, want nullable %s with id required", f, want)
	}
	if _, ok := s.Index("user"); !ok {
		t.Error("schema index not built")
	}
}

func TestParseJSONSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
		line int // 0: not checked
	}{
		{
			name: "unknown type with a hint",
			yaml: "type: object\nproperties:\n  user:\n    type: object\n    properties:\n      age: {type: int}\n",
			want: `schema property "user.age": unknown type "int" (did you mean "integer"?)`,
			line: 6,
		},
		{
			name: "misspelt type",
			yaml: `{type: object, properties: {a: {type: strng}}}`,
			want: `schema property "a": unknown type "strng" (did you mean "string"?)`,
		},
		{
			name: "timestamp type points to format",
			yaml: `{type: object, properties: {at: {type: timestamp}}}`,
			want: `schema property "at": unknown type "timestamp" (did you mean "string" with "format: date-time"?)`,
		},
		{
			name: "no hint possible",
			yaml: `{type: object, properties: {a: {type: qwertyuiop}}}`,
			want: `schema property "a": unknown type "qwertyuiop" (the types are boolean, integer, number, string, array, object, null)`,
		},
		{
			name: "root is not an object",
			yaml: `{type: array, items: {type: string}}`,
			want: `schema: the root must be "type: object" with "properties"`,
		},
		{
			name: "root without properties",
			yaml: `{type: object}`,
			want: `schema: the root object has no "properties"`,
		},
		{
			name: "root is a list",
			yaml: `[a, b]`,
			want: `schema: want a mapping with "type: object" and "properties"`,
		},
		{
			name: "required names an unknown property",
			yaml: `{type: object, required: [nme], properties: {name: {type: string}}}`,
			want: `schema: required property "nme" is not in "properties" (did you mean "name"?)`,
		},
		{
			name: "required is not a list",
			yaml: `{type: object, properties: {a: {type: string, required: true}}}`,
			want: `schema property "a": "required" must be a list of property names`,
		},
		{
			name: "misspelt keyword",
			yaml: `{type: object, properties: {user: {type: object, propertes: {a: {type: string}}}}}`,
			want: `schema property "user": unknown keyword "propertes" (did you mean "properties"?)`,
		},
		{
			name: "ref is not supported",
			yaml: `{type: object, properties: {a: {$ref: "#/defs/x"}}}`,
			want: `schema property "a": keyword "$ref" is not supported: write the type out in full`,
		},
		{
			name: "two types",
			yaml: `{type: object, properties: {a: {type: [string, integer]}}}`,
			want: `schema property "a": a type list may hold one type and "null", got "string" and "integer"`,
		},
		{
			name: "null alone",
			yaml: `{type: object, properties: {a: {type: "null"}}}`,
			want: `schema property "a": type "null" alone holds no values`,
		},
		{
			name: "anyOf of two types",
			yaml: `{type: object, properties: {a: {anyOf: [{type: string}, {type: integer}]}}}`,
			want: `schema property "a": anyOf and oneOf are supported only as [{type: T}, {type: "null"}]`,
		},
		{
			name: "bad array items path",
			yaml: `{type: object, properties: {tags: {type: array, items: {type: strin}}}}`,
			want: `schema property "tags[]": unknown type "strin" (did you mean "string"?)`,
		},
		{
			name: "bad map values path",
			yaml: `{type: object, properties: {attrs: {type: object, additionalProperties: {type: numbr}}}}`,
			want: `schema property "attrs.*": unknown type "numbr" (did you mean "number"?)`,
		},
		{
			name: "tuple items",
			yaml: `{type: object, properties: {p: {type: array, items: [{type: number}, {type: number}]}}}`,
			want: `schema property "p": tuple "items" (a list of schemas) are not supported: give one schema`,
		},
		{
			name: "property schema is not a mapping",
			yaml: `{type: object, properties: {a: string}}`,
			want: `schema property "a": want a schema mapping such as {type: string}, got "string"`,
		},
		{
			name: "property defined twice",
			yaml: "type: object\nproperties:\n  a: {type: string}\n  a: {type: integer}\n",
			want: `schema property "a": defined twice`,
		},
		{
			name: "unsupported encoding",
			yaml: `{type: object, properties: {a: {type: string, contentEncoding: base32}}}`,
			want: `schema property "a": contentEncoding "base32" is not supported (only base64)`,
		},
		{
			name: "closed empty object",
			yaml: `{type: object, properties: {a: {type: object, additionalProperties: false}}}`,
			want: `schema property "a": an object without properties and with "additionalProperties: false" holds nothing`,
		},
		{
			name: "text that is not JSON Schema",
			yaml: `events.avsc`,
			want: `schema: want a JSON Schema object, as a mapping or as JSON text, got "events.avsc"`,
		},
		{
			name: "broken JSON text",
			yaml: "|\n  {\"type\": \"object\",\n   \"properties\": {\"a\": {\"type\" \"string\"}}}\n",
			want: `schema: invalid JSON at byte 49: invalid character '"' after object key`,
			line: 3,
		},
		{
			name: "error inside JSON text has the file line",
			yaml: "|\n  {\"type\": \"object\",\n   \"properties\": {\n     \"a\": {\"type\": \"int\"}}}\n",
			want: `schema property "a": unknown type "int" (did you mean "integer"?)`,
			line: 4,
		},
		{
			name: "line after a blank line in the block",
			yaml: "|\n\n  {\"type\": \"object\",\n   \"properties\": {\"a\": {\"type\": \"int\"}}}\n",
			want: `schema property "a": unknown type "int" (did you mean "integer"?)`,
			line: 4,
		},
		{
			name: "JSON text on one line has the scalar's position",
			yaml: "'{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"int\"}}}'",
			want: `schema property "a": unknown type "int" (did you mean "integer"?)`,
			line: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSONSchema(yamlNode(t, tt.yaml))
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got  %s\n want %s", err, tt.want)
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *SchemaError")
			}
			if tt.line != 0 && se.Line != tt.line {
				t.Errorf("line %d, want %d", se.Line, tt.line)
			}
		})
	}
}

func TestParseJSONSchemaDocumentAndAliases(t *testing.T) {
	var doc yaml.Node
	text := "defs:\n  int: &int {type: integer}\nschema:\n  type: object\n  properties:\n    a: *int\n    b: *int\n"
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := ParseJSONSchema(doc.Content[0].Content[3])
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "{a integer?, b integer?}" {
		t.Errorf("got %s", got)
	}
	// A whole document works too.
	var whole yaml.Node
	if err := yaml.Unmarshal([]byte(`{type: object, properties: {a: {type: string}}}`), &whole); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseJSONSchema(&whole); err != nil {
		t.Error(err)
	}
	if _, err := ParseJSONSchema(nil); err == nil || err.Error() != "schema: missing" {
		t.Errorf("nil node: %v", err)
	}
}
