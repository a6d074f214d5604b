package avro

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	havro "github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/schemas"
)

const avroAll = `{"type": "record", "name": "All", "namespace": "t", "fields": [
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": "long"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "s", "type": "string"},
  {"name": "by", "type": "bytes"},
  {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "Two", "size": 2}},
  {"name": "day", "type": {"type": "int", "logicalType": "date"}},
  {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
  {"name": "decf", "type": {"type": "fixed", "name": "D", "size": 4, "logicalType": "decimal", "precision": 8, "scale": 3}},
  {"name": "arr", "type": {"type": "array", "items": ["null", "long"]}},
  {"name": "m", "type": {"type": "map", "values": "string"}},
  {"name": "rec", "type": ["null", {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": ["string", "null"]}]}]},
  {"name": "opt", "type": ["null", "string"]}]}`

func allRow() schemas.Row {
	return schemas.Row{
		true, int64(-7), int64(1) << 40, float64(float32(1.5)), 2.25, "héllo", []byte{0, 1},
		"GREEN", []byte{9, 8},
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.UnixMilli(1700000000123).UTC(),
		time.UnixMicro(1700000000123456).UTC(),
		big.NewRat(-12345, 100),
		big.NewRat(-5, 1000),
		[]any{int64(1), nil, int64(3)},
		map[string]any{"a": "x", "b": "y"},
		map[string]any{"x": int64(5), "y": nil},
		nil,
	}
}

// The codec's rows have the types ParseSchema gives, and what it writes reads back the
// same, also with hamba's own decoder.
func TestAvroCodecRoundTrip(t *testing.T) {
	c, err := NewCodec(avroAll)
	if err != nil {
		t.Fatal(err)
	}
	row := allRow()
	fields := make([]int, len(row))
	for i := range fields {
		fields[i] = i
	}
	data, err := c.NewEncoder().Append(nil, row, fields)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.NewDecoder().Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if r, ok := row[i].(*big.Rat); ok {
			if got[i].(*big.Rat).Cmp(r) != 0 {
				t.Errorf("field %s: %v, want %v", c.schema.Fields[i].Name, got[i], r)
			}
			continue
		}
		if !reflect.DeepEqual(got[i], row[i]) {
			t.Errorf("field %s: %#v, want %#v", c.schema.Fields[i].Name, got[i], row[i])
		}
	}
	var generic map[string]any
	if err := havro.Unmarshal(havro.MustParse(avroAll), data, &generic); err != nil {
		t.Fatalf("hamba cannot read what the codec wrote: %v", err)
	}
	if generic["s"] != "héllo" || generic["e"] != "GREEN" || generic["l"] != int64(1)<<40 {
		t.Errorf("hamba read %v", generic)
	}
}

// Values written by hamba decode into the row types.
func TestAvroDecodeForeign(t *testing.T) {
	schema := `{"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}, {"name": "tags", "type": {"type": "array", "items": "string"}}, {"name": "opt", "type": ["null", "double"]}]}`
	data, err := havro.Marshal(havro.MustParse(schema), map[string]any{"n": int64(42), "tags": []string{"a", "b"}, "opt": 1.5})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCodec(schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.NewDecoder().Decode(data)
	if want := (schemas.Row{int64(42), []any{"a", "b"}, 1.5}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %v, %v; want %v", got, err, want)
	}
}

func TestAvroDecodeErrors(t *testing.T) {
	c, err := NewCodec(`{"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}, {"name": "o", "type": ["null", "string"]}, {"name": "a", "type": {"type": "array", "items": "long"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		data []byte
		msg  string
	}{
		"empty":    {nil, "empty"},
		"short":    {[]byte{0x02}, "ends early"},
		"branch":   {[]byte{0x02, 0x08, 0x00}, `avro field "o": union branch 4 does not exist`},
		"trailing": {[]byte{0x02, 0x00, 0x00, 0x07}, "bytes after its last field"},
		"huge":     {[]byte{0x02, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x0f}, "does not fit in a record"},
	}
	for name, c2 := range cases {
		if _, err := c.NewDecoder().Decode(c2.data); err == nil || !strings.Contains(err.Error(), c2.msg) {
			t.Errorf("%s: %v, want an error about %q", name, err, c2.msg)
		}
	}
}

func TestAvroEncodeErrors(t *testing.T) {
	c, err := NewCodec(avroAll)
	if err != nil {
		t.Fatal(err)
	}
	fields := make([]int, 18)
	for i := range fields {
		fields[i] = i
	}
	for name, change := range map[string]struct {
		field int
		value any
		msg   string
	}{
		"null":    {0, nil, `avro field "b" is null`},
		"type":    {2, "x", `avro field "l": a string value does not fit the Avro schema's long`},
		"int":     {1, int64(1) << 40, "does not fit an Avro int"},
		"enum":    {7, "BLUE", `"BLUE" is not a symbol of the enum (RED, GREEN)`},
		"fixed":   {8, []byte{1}, "1 bytes do not fit a fixed of 2"},
		"decimal": {12, big.NewRat(1, 1000), "has more than 2 decimal places"},
		"nested":  {16, map[string]any{"y": "a"}, `avro field "rec.x" is null`},
	} {
		row := allRow()
		row[change.field] = change.value
		if _, err := c.NewEncoder().Append(nil, row, fields); err == nil || !strings.Contains(err.Error(), change.msg) {
			t.Errorf("%s: %v, want an error about %q", name, err, change.msg)
		}
	}
}

// The decimal encoder writes the shortest bytes that decimalOf reads back.
func TestDecimalBytes(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, -32768, 1 << 40, -(1 << 40)} {
		b := schemas.AppendDecimal(nil, big.NewInt(n))
		if got := decimalOf(b, 0); got.Cmp(new(big.Rat).SetInt64(n)) != 0 {
			t.Errorf("%d: %x reads back as %v", n, b, got)
		}
	}
	if b := schemas.AppendDecimal(nil, big.NewInt(-128)); len(b) != 1 {
		t.Errorf("-128 takes %d bytes", len(b))
	}
}

// The schema derived from a row schema holds its rows.
func TestAvroSchemaFor(t *testing.T) {
	s := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "user", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
			{Name: "name", Type: schemas.Type{Kind: schemas.String}},
			{Name: "addr", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{{Name: "city", Type: schemas.Type{Kind: schemas.String}}}}, Nullable: true}}}},
		schemas.Field{Name: "scores", Type: schemas.Type{Kind: schemas.Map, Elem: &schemas.Type{Kind: schemas.Float64}}, Nullable: true},
		schemas.Field{Name: "day", Type: schemas.Type{Kind: schemas.Date}},
		schemas.Field{Name: "amount", Type: schemas.Type{Kind: schemas.Decimal, Precision: 12, Scale: 2}})
	text, err := SchemaFor(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCodec(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if c.schema.String() != s.String() {
		t.Errorf("derived schema reads as %s, want %s", c.schema, s)
	}
	if _, err := SchemaFor(schemas.New(schemas.Field{Name: "x", Type: schemas.Type{Kind: schemas.Any}})); err == nil {
		t.Error("a schemaless field got an Avro type")
	}
}

func FuzzAvroDecode(f *testing.F) {
	c, err := NewCodec(avroAll)
	if err != nil {
		f.Fatal(err)
	}
	fields := make([]int, 18)
	for i := range fields {
		fields[i] = i
	}
	seed, err := c.NewEncoder().Append(nil, allRow(), fields)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0x01, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		row, err := c.NewDecoder().Decode(data)
		if err != nil {
			return
		}
		// What decodes must encode back to the same bytes.
		out, err := c.NewEncoder().Append(nil, row, fields)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", row, err)
		}
		again, err := c.NewDecoder().Decode(out)
		if err != nil || len(again) != len(row) {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
	})
}
