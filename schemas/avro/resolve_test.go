package avro

import (
	"reflect"
	"strings"
	"testing"
	"time"

	havro "github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/schemas"
)

func record(fields string) string {
	return `{"type": "record", "name": "R", "fields": [` + fields + `]}`
}

// Values written with one schema read into rows of another as Avro's schema resolution says.
func TestAvroResolve(t *testing.T) {
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name           string
		writer, reader string
		value          map[string]any // written with the writer's schema
		want           schemas.Row    // nil: an error containing err
		err            string
	}{
		{"extra writer field dropped",
			record(`{"name": "a", "type": "long"}, {"name": "x", "type": {"type": "array", "items": "string"}}, {"name": "b", "type": "string"}`),
			record(`{"name": "b", "type": "string"}, {"name": "a", "type": "long"}`),
			map[string]any{"a": int64(1), "x": []string{"p", "q"}, "b": "B"}, schemas.Row{"B", int64(1)}, ""},
		{"defaults",
			record(`{"name": "a", "type": "long"}`),
			record(`{"name": "a", "type": "long"}, {"name": "n", "type": "int", "default": 3}, {"name": "s", "type": ["null", "string"]},
				{"name": "d", "type": {"type": "int", "logicalType": "date"}, "default": 19724},
				{"name": "l", "type": {"type": "array", "items": "double"}, "default": [1.5]},
				{"name": "r", "type": {"type": "record", "name": "In", "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": "long", "default": 7}]}, "default": {"k": "kk"}}`),
			map[string]any{"a": int64(1)},
			schemas.Row{int64(1), int64(3), nil, day, []any{1.5}, map[string]any{"k": "kk", "v": int64(7)}}, ""},
		{"promotions",
			record(`{"name": "i", "type": "int"}, {"name": "l", "type": "long"}, {"name": "f", "type": "float"}, {"name": "s", "type": "string"}, {"name": "b", "type": "bytes"}`),
			record(`{"name": "i", "type": "long"}, {"name": "l", "type": "double"}, {"name": "f", "type": "double"}, {"name": "s", "type": "bytes"}, {"name": "b", "type": "string"}`),
			map[string]any{"i": 5, "l": int64(6), "f": float32(1.5), "s": "str", "b": []byte("byt")},
			schemas.Row{int64(5), 6.0, 1.5, []byte("str"), "byt"}, ""},
		{"aliases and nullability",
			record(`{"name": "old", "type": "string"}, {"name": "n", "type": ["null", "long"]}`),
			record(`{"name": "new", "aliases": ["old"], "type": ["null", "string"]}, {"name": "n", "type": ["null", "long"]}`),
			map[string]any{"old": "v", "n": int64(2)}, schemas.Row{"v", int64(2)}, ""},
		{"enum default",
			record(`{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}}`),
			record(`{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["C", "A", "OTHER"], "default": "OTHER"}}`),
			map[string]any{"e": "B"}, schemas.Row{"OTHER"}, ""},
		{"enum without default",
			record(`{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}}`),
			record(`{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}}`),
			map[string]any{"e": "B"}, nil, `the writer's enum symbol "B" is not a symbol of the reader's enum`},
		{"null into non-nullable",
			record(`{"name": "n", "type": ["null", "long"]}`),
			record(`{"name": "n", "type": "long"}`),
			map[string]any{"n": nil}, nil, "the writer's schema wrote null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := NewCodec(c.writer)
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewCodec(c.reader)
			if err != nil {
				t.Fatal(err)
			}
			root, err := resolveAvro(w.root, r.root)
			if err != nil {
				t.Fatal(err)
			}
			data, err := havro.Marshal(havro.MustParse(c.writer), c.value)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.NewDecoder().decodeAs(root, data)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("decoded %v, %v; want an error about %q", got, err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("decoded %#v, %v; want %#v", got, err, c.want)
			}
		})
	}
}

// Writer schemas that Avro cannot resolve to the reader's are refused with the field's path.
func TestAvroResolveErrors(t *testing.T) {
	cases := []struct{ writer, reader, err string }{
		{record(`{"name": "a", "type": "long"}`), record(`{"name": "a", "type": "int"}`),
			`avro field "a": the writer's schema has long there, which cannot be read as the reader's int`},
		{record(`{"name": "a", "type": "long"}`), record(`{"name": "a", "type": "long"}, {"name": "b", "type": "string"}`),
			`avro field "b" of the reader's schema is not in the writer's record, has no default and cannot be null`},
		{record(`{"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}}`), record(`{"name": "f", "type": {"type": "fixed", "name": "F", "size": 3}}`),
			`avro field "f": the writer's schema has a fixed of 2 bytes where the reader's has 3`},
		{record(`{"name": "r", "type": {"type": "record", "name": "In", "fields": [{"name": "x", "type": "string"}]}}`),
			record(`{"name": "r", "type": {"type": "record", "name": "In", "fields": [{"name": "x", "type": "boolean"}]}}`),
			`avro field "r.x": the writer's schema has string there, which cannot be read as the reader's boolean`},
	}
	for _, c := range cases {
		w, err := NewCodec(c.writer)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewCodec(c.reader)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resolveAvro(w.root, r.root); err == nil || err.Error() != c.err {
			t.Errorf("resolve: %v\nwant %s", err, c.err)
		}
	}
}

// FuzzAvroDecodeResolved decodes arbitrary bytes as values of avroAll read into another
// schema (fields dropped, reordered, promoted and defaulted): it must fail cleanly or give rows
// of the reader's width.
func FuzzAvroDecodeResolved(f *testing.F) {
	w, err := NewCodec(avroAll)
	if err != nil {
		f.Fatal(err)
	}
	r, err := NewCodec(`{"type": "record", "name": "All", "namespace": "t", "fields": [
	  {"name": "d", "type": "double"}, {"name": "i", "type": "double"}, {"name": "s", "type": "bytes"},
	  {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["GREEN"], "default": "GREEN"}},
	  {"name": "arr", "type": {"type": "array", "items": ["null", "double"]}},
	  {"name": "rec", "type": ["null", {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "long"}, {"name": "z", "type": "int", "default": 1}]}]},
	  {"name": "extra", "type": ["null", "string"]}]}`)
	if err != nil {
		f.Fatal(err)
	}
	root, err := resolveAvro(w.root, r.root)
	if err != nil {
		f.Fatal(err)
	}
	fields := make([]int, 18)
	for i := range fields {
		fields[i] = i
	}
	seed, err := w.NewEncoder().Append(nil, allRow(), fields)
	if err != nil {
		f.Fatal(err)
	}
	if row, err := r.NewDecoder().decodeAs(root, seed); err != nil || row[1] != -7.0 || row[3] != "GREEN" {
		f.Fatalf("the seed decodes to %v, %v", row, err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		row, err := r.NewDecoder().decodeAs(root, data)
		if err == nil && len(row) != len(r.schema.Fields) {
			t.Fatalf("a row of %d fields, the reader has %d", len(row), len(r.schema.Fields))
		}
	})
}
