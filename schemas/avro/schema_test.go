package avro

import (
	"strings"
	"testing"
)

func TestParseAvroSchema(t *testing.T) {
	s, err := ParseSchema(`{"type": "record", "name": "Event", "namespace": "com.example", "fields": [
		{"name": "id", "type": "long"},
		{"name": "n", "type": "int"},
		{"name": "name", "type": ["null", "string"], "default": null},
		{"name": "score", "type": "double"},
		{"name": "ratio", "type": ["float", "null"]},
		{"name": "ok", "type": "boolean"},
		{"name": "raw", "type": "bytes"},
		{"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}},
		{"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
		{"name": "fprice", "type": {"type": "fixed", "name": "D", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4}},
		{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
		{"name": "tsu", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
		{"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
		{"name": "day", "type": {"type": "int", "logicalType": "date"}},
		{"name": "tod", "type": {"type": "int", "logicalType": "time-millis"}},
		{"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
		{"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
		{"name": "tags", "type": {"type": "array", "items": ["null", "string"]}},
		{"name": "attrs", "type": {"type": "map", "values": "long"}},
		{"name": "user", "type": {"type": "record", "name": "User", "fields": [
			{"name": "age", "type": ["int", "null"]},
			{"name": "email", "type": "string"}
		]}},
		{"name": "owner", "type": ["null", "User"]}
	]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "{id integer, n integer, name string?, score number, ratio number?, ok boolean, raw bytes, fx bytes, " +
		"price decimal(10, 2), fprice decimal(18, 4), ts timestamp, tsu timestamp?, local timestamp, day date, tod integer, " +
		"uid string, color string, tags array<string>, attrs map<string, integer>, " +
		"user struct<age integer, email string>, owner struct<age integer, email string>?}"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	user, _ := s.Field("user")
	if !user.Type.Fields[0].Nullable || user.Type.Fields[1].Nullable {
		t.Errorf("nested nullability lost: %+v", user.Type.Fields)
	}
}

func TestParseAvroSchemaSameNameTwice(t *testing.T) {
	// Named types are not shared between calls: two pipelines may define the same name.
	a := `{"type": "record", "name": "E", "fields": [{"name": "a", "type": "long"}]}`
	b := `{"type": "record", "name": "E", "fields": [{"name": "b", "type": "string"}]}`
	for _, text := range []string{a, b} {
		if _, err := ParseSchema(text); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := ParseSchema(b)
	if s.String() != "{b string}" {
		t.Errorf("got %s", s)
	}
}

func TestParseAvroSchemaErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"primitive root", `"string"`, `avro schema: the root must be a record, got string`},
		{"array root", `{"type": "array", "items": "long"}`, `avro schema: the root must be a record, got array`},
		{"enum root", `{"type": "enum", "name": "C", "symbols": ["A"]}`, `avro schema: the root must be a record, got enum "C"`},
		{"not JSON", `{"type": "record", `, `avro schema: invalid JSON at byte 19: unexpected end of JSON input`},
		{"unknown type", `{"type": "record", "name": "E", "fields": [{"name": "a", "type": "integer"}]}`, `avro schema: unknown type: integer`},
		{
			"wide union",
			`{"type": "record", "name": "E", "fields": [{"name": "a", "type": ["null", "string", "long"]}]}`,
			`avro field "a": union ["null","string","long"] is not supported: only a type and "null" can be combined`,
		},
		{
			"null only",
			`{"type": "record", "name": "E", "fields": [{"name": "a", "type": {"type": "record", "name": "I", "fields": [{"name": "b", "type": "null"}]}}]}`,
			`avro field "a.b": type "null" alone holds no values`,
		},
		{
			"recursive",
			`{"type": "record", "name": "Node", "fields": [{"name": "v", "type": "long"}, {"name": "next", "type": ["null", "Node"]}]}`,
			`avro field "next": record "Node" contains itself, and recursive types are not supported`,
		},
		{
			"union in array items",
			`{"type": "record", "name": "E", "fields": [{"name": "a", "type": {"type": "array", "items": ["long", "string"]}}]}`,
			`avro field "a[]": union ["long","string"] is not supported: only a type and "null" can be combined`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchema(tt.text)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n got  %s\n want %s", err, tt.want)
			}
		})
	}
}

// FuzzParseAvroSchema checks that no schema text makes ParseSchema panic.
func FuzzParseAvroSchema(f *testing.F) {
	f.Add(`{"type": "record", "name": "E", "fields": [{"name": "a", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]}]}`)
	f.Add(`{"type": "record", "name": "N", "fields": [{"name": "next", "type": ["null", "N"]}, {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "string"}}}]}`)
	f.Add(`{"type": "record", "name": "D", "fields": [{"name": "d", "type": {"type": "fixed", "name": "F", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4}}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSchema(text)
		if err == nil {
			_ = s.String()
		}
	})
}
