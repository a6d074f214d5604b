package schemas

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestCoerce(t *testing.T) {
	str := Type{Kind: String}
	user := Type{Kind: Struct, Fields: []Field{{Name: "name", Type: str}, {Name: "age", Type: Type{Kind: Int64}, Nullable: true}}}
	tests := []struct {
		name string
		in   any
		t    Type
		want any
	}{
		{"int to integer", 3, Type{Kind: Int64}, int64(3)},
		{"whole float to integer", 3.0, Type{Kind: Int64}, int64(3)},
		{"uint64 to integer", uint64(7), Type{Kind: Int64}, int64(7)},
		{"json.Number to integer", json.Number("12"), Type{Kind: Int64}, int64(12)},
		{"int to number", 3, Type{Kind: Float64}, 3.0},
		{"float32 keeps its decimal", float32(0.1), Type{Kind: Float64}, 0.1},
		{"string", "x", str, "x"},
		{"bool", true, Type{Kind: Bool}, true},
		{"base64 to bytes", "aGk=", Type{Kind: Bytes}, []byte("hi")},
		{"bytes to bytes", []byte("hi"), Type{Kind: Bytes}, []byte("hi")},
		{"RFC 3339 to timestamp", "2024-01-01T01:00:00+01:00", Type{Kind: Timestamp}, ts("2024-01-01T00:00:00Z")},
		{"time.Time to timestamp in UTC", time.Date(2024, 1, 1, 1, 0, 0, 0, time.FixedZone("x", 3600)), Type{Kind: Timestamp}, ts("2024-01-01T00:00:00Z")},
		{"epoch seconds to timestamp", 1700000000, Type{Kind: Timestamp}, ts("2023-11-14T22:13:20Z")},
		{"float epoch seconds are exact to the millisecond", 1700000000.123, Type{Kind: Timestamp}, ts("2023-11-14T22:13:20.123Z")},
		{"date", "2024-02-29", Type{Kind: Date}, day("2024-02-29")},
		{"midnight time.Time to date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.FixedZone("x", -3600)), Type{Kind: Date}, day("2024-02-29")},
		{"float to decimal", 12.5, Type{Kind: Decimal, Precision: 5, Scale: 2}, rat("12.5")},
		{"string to decimal", "0.01", Type{Kind: Decimal, Precision: 5, Scale: 2}, rat("1/100")},
		{"rat to decimal", big.NewRat(1, 4), Type{Kind: Decimal, Precision: 5, Scale: 2}, rat("0.25")},
		{"int to decimal", 42, Type{Kind: Decimal, Precision: 5, Scale: 2}, rat("42")},
		{"array", []any{"a", nil}, Type{Kind: Array, Elem: &str}, []any{"a", nil}},
		{"string slice", []string{"a"}, Type{Kind: Array, Elem: &str}, []any{"a"}},
		{"struct fills missing nullable fields, ignores unknown keys", map[string]any{"name": "ann", "x": 1}, user, map[string]any{"name": "ann", "age": nil}},
		{"struct from yaml.v2-style map", map[any]any{"name": "bob", "age": 5}, user, map[string]any{"name": "bob", "age": int64(5)}},
		{"map", map[string]any{"a": 1, "b": nil}, Type{Kind: Map, Elem: &Type{Kind: Float64}}, map[string]any{"a": 1.0, "b": nil}},
		{"any normalizes numbers", map[string]any{"i": 1, "f": 2.0, "g": 2.5, "n": json.Number("3"), "l": []any{uint8(4)}},
			Type{Kind: Any}, map[string]any{"i": int64(1), "f": int64(2), "g": 2.5, "n": int64(3), "l": []any{int64(4)}}},
		{"any turns times and bytes into strings", []any{ts("2024-01-01T00:00:00Z"), []byte{1}}, Type{Kind: Any}, []any{"2024-01-01T00:00:00Z", "AQ=="}},
		{"null", nil, str, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Coerce(tt.in, tt.t, true)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestCoerceErrors(t *testing.T) {
	str := Type{Kind: String}
	user := Type{Kind: Struct, Fields: []Field{{Name: "name", Type: str}, {Name: "tags", Type: Type{Kind: Array, Elem: &Type{Kind: Int64}}, Nullable: true}}}
	tests := []struct {
		name     string
		in       any
		t        Type
		nullable bool
		want     string
	}{
		{"null when not nullable", nil, str, false, `want a string, got null`},
		{"string for number", "abc", Type{Kind: Float64}, true, `want a number, got string "abc"`},
		{"fraction for integer", 1.5, Type{Kind: Int64}, true, `want an integer, got number 1.5, which is not a whole number`},
		{"uint64 beyond int64", uint64(math.MaxUint64), Type{Kind: Int64}, true, `want an integer, got number 18446744073709551615, which is out of range`},
		{"float beyond int64", 1e19, Type{Kind: Int64}, true, `want an integer, got number 1e+19, which is out of range`},
		{"NaN", math.NaN(), Type{Kind: Float64}, true, `want a number, got number NaN, which JSON cannot hold`},
		{"number for string", 5, str, true, `want a string, got number 5`},
		{"date with a time of day", ts("2024-01-01T10:00:00Z"), Type{Kind: Date}, true, `want a date (YYYY-MM-DD), got timestamp 2024-01-01T10:00:00Z, which has a time of day`},
		{"timestamp out of range", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Type{Kind: Timestamp}, true, `want a timestamp (RFC 3339 string or epoch seconds), got timestamp 10000-01-01T00:00:00Z, which is outside the years 0000 to 9999`},
		{"rat beyond scale", big.NewRat(1, 3), Type{Kind: Decimal, Precision: 5, Scale: 2}, true, `want decimal(5, 2), got number 1/3, which has more than 2 decimal places`},
		{"list for struct", []any{1}, user, true, `want an object, got array`},
		{"missing struct field", map[string]any{}, user, true, `field "name": missing, and the field is not nullable`},
		{"null struct field", map[string]any{"name": nil}, user, true, `field "name": want a string, got null`},
		{"nested element", map[string]any{"name": "x", "tags": []any{1, "2"}}, user, true, `field "tags[1]": want an integer, got string "2"`},
		{"non-string key", map[any]any{1: "x"}, user, true, `object keys must be strings, got number 1`},
		{"bad json.Number", json.Number("1x"), Type{Kind: Int64}, true, `invalid number "1x"`},
		{"unsupported value in any", struct{}{}, Type{Kind: Any}, true, `unsupported value object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Coerce(tt.in, tt.t, tt.nullable)
			if err == nil {
				t.Fatalf("no error, got %#v", got)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got  %s\n want %s", err, tt.want)
			}
		})
	}
}

// Create's elements are decoded by yaml.v3 and coerced: what a user writes in YAML must land
// as the same values a JSON record with the same content decodes to.
func TestCoerceYAMLMatchesDecode(t *testing.T) {
	s := kindsSchema()
	var elem map[string]any
	text := `
id: 5
ok: true
x: 1
s: hello
b: aGVsbG8=
ts: 2024-05-01T10:00:00Z
d: 2024-02-29
price: 12.50
tags: [a, b]
user: {name: ann, age: 30}
attrs: {k: 2}
extra: {n: [1, 2.5]}
events: [{at: 1700000000}]
`
	if err := yaml.Unmarshal([]byte(text), &elem); err != nil {
		t.Fatal(err)
	}
	fromYAML := make(Row, len(s.Fields))
	for i, f := range s.Fields {
		v, err := Coerce(elem[f.Name], f.Type, f.Nullable)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		fromYAML[i] = v
	}
	fromJSON, err := NewJSONDecoder(s).Decode([]byte(`{"id": 5, "ok": true, "x": 1, "s": "hello", "b": "aGVsbG8=",
		"ts": "2024-05-01T10:00:00Z", "d": "2024-02-29", "price": 12.50, "tags": ["a", "b"],
		"user": {"name": "ann", "age": 30}, "attrs": {"k": 2}, "extra": {"n": [1, 2.5]}, "events": [{"at": 1700000000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sameValue(fromYAML, fromJSON) {
		t.Errorf("YAML %#v\nJSON %#v", fromYAML, fromJSON)
	}
}
