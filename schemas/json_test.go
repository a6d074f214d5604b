package schemas

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kindsSchema has a field of every kind; only id is required.
func kindsSchema() *Schema {
	return New(
		Field{Name: "id", Type: Type{Kind: Int64}},
		Field{Name: "ok", Type: Type{Kind: Bool}, Nullable: true},
		Field{Name: "x", Type: Type{Kind: Float64}, Nullable: true},
		Field{Name: "s", Type: Type{Kind: String}, Nullable: true},
		Field{Name: "b", Type: Type{Kind: Bytes}, Nullable: true},
		Field{Name: "ts", Type: Type{Kind: Timestamp}, Nullable: true},
		Field{Name: "d", Type: Type{Kind: Date}, Nullable: true},
		Field{Name: "price", Type: Type{Kind: Decimal, Precision: 10, Scale: 2}, Nullable: true},
		Field{Name: "tags", Type: Type{Kind: Array, Elem: &Type{Kind: String}}, Nullable: true},
		Field{Name: "user", Type: Type{Kind: Struct, Fields: []Field{
			{Name: "name", Type: Type{Kind: String}},
			{Name: "age", Type: Type{Kind: Int64}, Nullable: true},
		}}, Nullable: true},
		Field{Name: "attrs", Type: Type{Kind: Map, Elem: &Type{Kind: Float64}}, Nullable: true},
		Field{Name: "extra", Type: Type{Kind: Any}, Nullable: true},
		Field{Name: "events", Type: Type{Kind: Array, Elem: &Type{Kind: Struct, Fields: []Field{
			{Name: "at", Type: Type{Kind: Timestamp}},
			{Name: "days", Type: Type{Kind: Array, Elem: &Type{Kind: Date}}, Nullable: true},
		}}}, Nullable: true},
	)
}

// kindsRow builds a row of kindsSchema from the named values.
func kindsRow(vals map[string]any) Row {
	s := kindsSchema()
	row := make(Row, len(s.Fields))
	for k, v := range vals {
		i, ok := s.Index(k)
		if !ok {
			panic(k)
		}
		row[i] = v
	}
	return row
}

// jsonDecodeCases are records of kindsSchema and their rows.
var jsonDecodeCases = []struct {
	name string
	in   string
	want map[string]any
}{
	{"only the required field", `{"id": 1}`, map[string]any{"id": int64(1)}},
	{"nulls and unknown properties", `{"id": 2, "s": null, "zzz": {"deep": [1, 2]}, "ok": null}`, map[string]any{"id": int64(2)}},
	{
		"every kind",
		`{"id": -9223372036854775808, "ok": true, "x": 2.5, "s": "caf\u00e9 \ud83d\ude00 \"q\"", "b": "aGVsbG8=",
			  "ts": "2024-05-01T12:00:00.123456789+02:00", "d": "2024-02-29", "price": 12.5,
			  "tags": ["a", null, "c"], "user": {"name": "ann"}, "attrs": {"k": 1, "z": -0.5},
			  "extra": {"a": [1, 2.5, "x", null, true, {"b": 1.0}], "big": 1e300},
			  "events": [{"at": 0, "days": ["1970-01-01"]}, {"at": "2000-01-01T00:00:00Z"}]}`,
		map[string]any{
			"id": int64(math.MinInt64), "ok": true, "x": 2.5, "s": "café 😀 \"q\"", "b": []byte("hello"),
			"ts": ts("2024-05-01T10:00:00.123456789Z"), "d": day("2024-02-29"), "price": rat("12.5"),
			"tags":  []any{"a", nil, "c"},
			"user":  map[string]any{"name": "ann", "age": nil},
			"attrs": map[string]any{"k": 1.0, "z": -0.5},
			"extra": map[string]any{"a": []any{int64(1), 2.5, "x", nil, true, map[string]any{"b": int64(1)}}, "big": 1e300},
			"events": []any{
				map[string]any{"at": ts("1970-01-01T00:00:00Z"), "days": []any{day("1970-01-01")}},
				map[string]any{"at": ts("2000-01-01T00:00:00Z"), "days": nil},
			},
		},
	},
	{"whole numbers written as floats are integers", `{"id": 1.0}`, map[string]any{"id": int64(1)}},
	{"exponents are integers when whole", `{"id": 1.5e3}`, map[string]any{"id": int64(1500)}},
	{"largest integer", `{"id": 9223372036854775807}`, map[string]any{"id": int64(math.MaxInt64)}},
	{"numbers accept integers", `{"id": 1, "x": 3}`, map[string]any{"id": int64(1), "x": 3.0}},
	{"epoch seconds with a fraction are exact", `{"id": 1, "ts": 1700000000.123}`, map[string]any{"id": int64(1), "ts": ts("2023-11-14T22:13:20.123Z")}},
	{"negative epoch seconds", `{"id": 1, "ts": -1.5}`, map[string]any{"id": int64(1), "ts": ts("1969-12-31T23:59:58.5Z")}},
	{"unpadded base64", `{"id": 1, "b": "aGVsbG8"}`, map[string]any{"id": int64(1), "b": []byte("hello")}},
	{"URL-safe base64", `{"id": 1, "b": "-_8="}`, map[string]any{"id": int64(1), "b": []byte{0xfb, 0xff}}},
	{"decimal as a string", `{"id": 1, "price": "-0.10"}`, map[string]any{"id": int64(1), "price": rat("-1/10")}},
	{"duplicate property: the last wins", `{"id": 1, "id": 2}`, map[string]any{"id": int64(2)}},
	{"fields in any order", `{"s": "x", "ok": false, "id": 3}`, map[string]any{"id": int64(3), "s": "x", "ok": false}},
}

func TestJSONDecode(t *testing.T) {
	d := NewJSONDecoder(kindsSchema())
	for _, tt := range jsonDecodeCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := kindsRow(tt.want); !sameValue(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

// jsonDecodeErrorCases are bad records of kindsSchema and their errors.
var jsonDecodeErrorCases = []struct {
	name, in, want string
}{
	{"string for integer", `{"id": "1"}`, `field "id": want an integer, got string "1"`},
	{"fraction for integer", `{"id": 1.5}`, `field "id": want an integer, got number 1.5, which is not a whole number`},
	{"integer out of range", `{"id": 9223372036854775808}`, `field "id": want an integer, got number 9223372036854775808, which is out of range`},
	{"huge exponent", `{"id": 1e400}`, `field "id": want an integer, got number 1e400, which is out of range`},
	{"required field missing", `{"s": "x"}`, `field "id": missing, and the field is not nullable`},
	{"null in a required field", `{"id": null}`, `field "id": want an integer, got null`},
	{"string for number", `{"id": 1, "x": "abc"}`, `field "x": want a number, got string "abc"`},
	{"number beyond float64", `{"id": 1, "x": -1e999}`, `field "x": want a number, got number -1e999, which is out of range`},
	{"boolean as string", `{"id": 1, "ok": "true"}`, `field "ok": want a boolean, got string "true"`},
	{"string as number", `{"id": 1, "s": 5}`, `field "s": want a string, got number 5`},
	{"bad timestamp", `{"id": 1, "ts": "yesterday"}`, `field "ts": want a timestamp (RFC 3339 string or epoch seconds), got string "yesterday"`},
	{"timestamp without zone", `{"id": 1, "ts": "2024-01-01T00:00:00"}`, `field "ts": want a timestamp (RFC 3339 string or epoch seconds), got string "2024-01-01T00:00:00"`},
	{"timestamp beyond year 9999", `{"id": 1, "ts": 1e13}`, `field "ts": want a timestamp (RFC 3339 string or epoch seconds), got number 1e13, which is outside the years 0000 to 9999`},
	{"bad date", `{"id": 1, "d": "2024-13-01"}`, `field "d": want a date (YYYY-MM-DD), got string "2024-13-01"`},
	{"date as number", `{"id": 1, "d": 20240101}`, `field "d": want a date (YYYY-MM-DD), got number 20240101`},
	{"bad base64", `{"id": 1, "b": "!!"}`, `field "b": want a base64 string, got string "!!"`},
	{"decimal scale", `{"id": 1, "price": 1.234}`, `field "price": want decimal(10, 2), got number 1.234, which has more than 2 decimal places`},
	{"decimal precision", `{"id": 1, "price": "123456789"}`, `field "price": want decimal(10, 2), got string "123456789", which has more than 8 digits before the decimal point`},
	{"decimal from words", `{"id": 1, "price": "ten"}`, `field "price": want decimal(10, 2), got string "ten"`},
	{"array element", `{"id": 1, "tags": ["a", 1]}`, `field "tags[1]": want a string, got number 1`},
	{"array as object", `{"id": 1, "tags": {"a": 1}}`, `field "tags": want an array, got object`},
	{"nested required field", `{"id": 1, "user": {"age": 3}}`, `field "user.name": missing, and the field is not nullable`},
	{"nested type", `{"id": 1, "user": {"name": "x", "age": "y"}}`, `field "user.age": want an integer, got string "y"`},
	{"struct as string", `{"id": 1, "user": "ann"}`, `field "user": want an object, got string "ann"`},
	{"map value", `{"id": 1, "attrs": {"k": "v"}}`, `field "attrs.k": want a number, got string "v"`},
	{"struct in array", `{"id": 1, "events": [{"at": 1}, {"at": 2, "days": ["x"]}]}`, `field "events[1].days[0]": want a date (YYYY-MM-DD), got string "x"`},
	{"long strings are clipped", `{"id": "` + strings.Repeat("é", 50) + `"}`, `field "id": want an integer, got string "` + strings.Repeat("é", 32) + `..."`},
	{"not an object", `[1, 2]`, `want a JSON object, got array`},
	{"a string", `"id"`, `want a JSON object, got string "id"`},
	{"trailing comma", `{"id": 1,}`, `invalid JSON at byte 10: invalid character '}' looking for beginning of object key string`},
	{"truncated", `{"id": 1`, `invalid JSON at byte 8: unexpected end of JSON input`},
	{"empty", ``, `invalid JSON at byte 0: unexpected end of JSON input`},
	{"NaN", `{"id": 1, "x": NaN}`, `invalid JSON at byte 16: invalid character 'N' looking for beginning of value`},
	{"leading zero", `{"id": 01}`, `invalid JSON at byte 9: invalid character '1' after object key:value pair`},
	{"two values", `{"id": 1} {"id": 2}`, `invalid JSON at byte 11: invalid character '{' after top-level value`},
	{"invalid UTF-8 in a value", "{\"id\": 1, \"s\": \"a\xffb\"}", `invalid JSON at byte 18: invalid UTF-8 (byte 0xff); JSON text must be UTF-8`},
	{"invalid UTF-8 in a key", "{\"id\": 1, \"\xc3(\": \"x\"}", `invalid JSON at byte 12: invalid UTF-8 (byte 0xc3); JSON text must be UTF-8`},
	{"invalid UTF-8 in an ignored property", "{\"id\": 1, \"other\": \"\xed\xa0\x80\"}", `invalid JSON at byte 21: invalid UTF-8 (byte 0xed); JSON text must be UTF-8`},
	{"invalid UTF-8 in a map key", "{\"id\": 1, \"attrs\": {\"k\xfe\": 1}}", `invalid JSON at byte 23: invalid UTF-8 (byte 0xfe); JSON text must be UTF-8`},
}

func TestJSONDecodeErrors(t *testing.T) {
	d := NewJSONDecoder(kindsSchema())
	for _, tt := range jsonDecodeErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			row, err := d.Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("no error, got %v; want %s", row, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got  %s\n want %s", err, tt.want)
			}
		})
	}
}

func TestJSONDecodeFieldErrorPath(t *testing.T) {
	_, err := NewJSONDecoder(kindsSchema()).Decode([]byte(`{"id": 1, "events": [{"at": true}]}`))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "events[0].at" {
		t.Fatalf("got %#v, want a *FieldError at events[0].at", err)
	}
}

func TestJSONDecodeRowsDoNotShareMemory(t *testing.T) {
	s := New(
		Field{Name: "s", Type: Type{Kind: String}},
		Field{Name: "b", Type: Type{Kind: Bytes}},
		Field{Name: "a", Type: Type{Kind: Any}},
		Field{Name: "m", Type: Type{Kind: Map, Elem: &Type{Kind: String}}},
	)
	d := NewJSONDecoder(s)
	in := []byte(`{"s": "first\nvalue", "b": "AAEC", "a": {"k": "v\u00e9"}, "m": {"key": "val"}}`)
	first, err := d.Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite the input and reuse the parser: the first row must not change.
	for i := range in {
		in[i] = ' '
	}
	if _, err := d.Decode([]byte(`{"s": "SECOND-VALUE-XXXXXXXXXX", "b": "////", "a": {"k": "zzzzz"}, "m": {"zzz": "zzz"}}`)); err != nil {
		t.Fatal(err)
	}
	want := Row{"first\nvalue", []byte{0, 1, 2}, map[string]any{"k": "vé"}, map[string]any{"key": "val"}}
	if !sameValue(first, want) {
		t.Errorf("first row changed: %#v", first)
	}
}

func TestAppendJSON(t *testing.T) {
	row := kindsRow(map[string]any{
		"id": int64(7), "ok": false, "x": 0.1, "s": "<a&b>\n\"é\"\u2028", "b": []byte{0, 255},
		"ts": time.Date(2024, 5, 1, 12, 0, 0, 120000000, time.FixedZone("x", 3600)), "d": day("2024-02-29"),
		"price": rat("12.5"), "tags": []any{"a", nil},
		"user":   map[string]any{"name": "ann"},
		"attrs":  map[string]any{"z": 1.0, "a": math.Inf(1)},
		"extra":  map[string]any{"n": []any{int64(1), 2.5, nil, "s", true}},
		"events": []any{map[string]any{"at": ts("2000-01-01T00:00:00Z"), "days": []any{day("2000-01-02")}}},
	})
	got := string(AppendJSON([]byte("prefix "), kindsSchema(), row))
	want := `prefix {"id":7,"ok":false,"x":0.1,"s":"<a&b>\n\"é\"\u2028","b":"AP8=",` +
		`"ts":"2024-05-01T11:00:00.12Z","d":"2024-02-29","price":12.50,"tags":["a",null],` +
		`"user":{"name":"ann","age":null},"attrs":{"a":null,"z":1},"extra":{"n":[1,2.5,null,"s",true]},` +
		`"events":[{"at":"2000-01-01T00:00:00Z","days":["2000-01-02"]}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got[len("prefix "):])) {
		t.Error("output is not valid JSON")
	}
}

func TestAppendJSONStringsMatchEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", "tab\there", "nul\x00 bell\x07 esc\x1b del\x7f", `back\slash "quote"`, "bad \xff\xfe utf8",
		"truncated \xe2\x82", "emoji 😀", "sep \u2028 \u2029", "<script>&amp;</script>", "\u00e9\u0301",
	} {
		got := appendString(nil, s)
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(buf.String(), "\n"); string(got) != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// TestAppendJSONStringsWordAtATime puts every byte value at every position of strings long
// enough for the 8-byte scan, as encoding/json writes them.
func TestAppendJSONStringsWordAtATime(t *testing.T) {
	base := []byte("abcdefghijklmnopqrstuvwxyz0123") // 30 plain bytes
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for c := 0; c < 256; c++ {
		for at := range base {
			b := append([]byte(nil), base...)
			b[at] = byte(c)
			buf.Reset()
			if err := enc.Encode(string(b)); err != nil {
				t.Fatal(err)
			}
			if got, want := string(appendString(nil, string(b))), strings.TrimSuffix(buf.String(), "\n"); got != want {
				t.Fatalf("byte %#x at %d: got %s, want %s", c, at, got, want)
			}
		}
	}
}

func TestAppendJSONFloats(t *testing.T) {
	s := New(Field{Name: "x", Type: Type{Kind: Float64}, Nullable: true})
	d := NewJSONDecoder(s)
	for _, f := range []float64{0, math.Copysign(0, -1), 0.1, 1e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5e-300} {
		out := AppendJSON(nil, s, Row{f})
		row, err := d.Decode(out)
		if err != nil {
			t.Fatalf("%v: %s: %v", f, out, err)
		}
		if row[0] != f {
			t.Errorf("%v encoded as %s decodes to %v", f, out, row[0])
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if out := string(AppendJSON(nil, s, Row{f})); out != `{"x":null}` {
			t.Errorf("%v encoded as %s, want null", f, out)
		}
	}
}

func TestAppendJSONMismatchedValues(t *testing.T) {
	// A value of another Go type than its kind is written as what it holds, not dropped.
	s := New(
		Field{Name: "a", Type: Type{Kind: Int64}},
		Field{Name: "b", Type: Type{Kind: String}},
		Field{Name: "c", Type: Type{Kind: Float64}},
		Field{Name: "d", Type: Type{Kind: Struct}},
	)
	got := string(AppendJSON(nil, s, Row{3, int64(4), float32(0.5)}))
	if want := `{"a":3,"b":4,"c":0.5,"d":null}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	s := kindsSchema()
	rows := []Row{
		kindsRow(map[string]any{"id": int64(0)}),
		kindsRow(map[string]any{
			"id": int64(math.MaxInt64), "ok": true, "x": -1.25e-10, "s": "multi\nline \x01 \xff", "b": []byte{},
			"ts": ts("0001-01-01T00:00:00.000000001Z"), "d": day("9999-12-31"), "price": rat("-99999999.99"),
			"tags": []any{}, "user": map[string]any{"name": "", "age": int64(-1)},
			"attrs": map[string]any{"": 0.0, "k\"ey": 1e300}, "extra": []any{map[string]any{}, []any{}, "", int64(-5), 0.5},
			"events": []any{map[string]any{"at": ts("2038-01-19T03:14:08Z"), "days": nil}},
		}),
		kindsRow(map[string]any{"id": int64(-1), "extra": "just a string", "price": rat("0")}),
	}
	d := NewJSONDecoder(s)
	for _, row := range rows {
		out := AppendJSON(nil, s, row)
		back, err := d.Decode(out)
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		// Invalid UTF-8 is replaced on the way out, as encoding/json does.
		want := row
		if i, _ := s.Index("s"); row[i] != nil {
			want = append(Row(nil), row...)
			want[i] = strings.ToValidUTF8(row[i].(string), "\uFFFD")
		}
		if !sameValue(back, want) {
			t.Errorf("round trip through %s\n got  %#v\n want %#v", out, back, want)
		}
	}
}

// Repeated short strings are shared between rows and distinct ones are not cached for long;
// either way every row holds its own value.
func TestJSONDecodeStringCache(t *testing.T) {
	s := New(Field{Name: "country", Type: Type{Kind: String}}, Field{Name: "id", Type: Type{Kind: String}})
	d := NewJSONDecoder(s)
	countries := []string{"NL", "DE", "BR"}
	for i := range 3 * internWindow {
		id := strconv.Itoa(i)
		in := `{"country": "` + countries[i%3] + `", "id": "` + id + `"}`
		row, err := d.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if row[0] != countries[i%3] || row[1] != id {
			t.Fatalf("record %d: got %v", i, row)
		}
	}
	if c := d.plan.fields[0].plan.strs; c.off || len(c.m) != 3 {
		t.Errorf("country cache: off %v, %d entries; want on with 3", c.off, len(c.m))
	}
	if c := d.plan.fields[1].plan.strs; !c.off {
		t.Error("id cache still on for values that never repeat")
	}
}
