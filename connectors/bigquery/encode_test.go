package bigquery

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bq "cloud.google.com/go/bigquery"
	"github.com/sluicehq/sluice/schemas"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The tests decode what Encode writes with dynamicpb, from the normalized descriptor the
// writer sends, as the server does; proto.Unmarshal also checks that REQUIRED fields are set.

func mustEncoder(t testing.TB, table bq.Schema, in *schemas.Schema) *encoder {
	t.Helper()
	e, err := newEncoder(table, in)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func messageType(t testing.TB, dp *descriptorpb.DescriptorProto) protoreflect.MessageDescriptor {
	t.Helper()
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: new("decode.proto"), Syntax: new("proto2"), MessageType: []*descriptorpb.DescriptorProto{dp},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

func decode(t testing.TB, e *encoder, b []byte) protoreflect.Message {
	t.Helper()
	m := dynamicpb.NewMessage(messageType(t, e.Descriptor()))
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatalf("decoding %x: %v", b, err)
	}
	return m
}

func field(t testing.TB, m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	t.Helper()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		t.Fatalf("message %s has no field %q", m.Descriptor().FullName(), name)
	}
	return fd
}

func get(t testing.TB, m protoreflect.Message, name string) protoreflect.Value {
	t.Helper()
	fd := field(t, m, name)
	if !m.Has(fd) {
		t.Fatalf("field %q is not set", name)
	}
	return m.Get(fd)
}

// decodeDecimal reads NUMERIC/BIGNUMERIC bytes (little-endian two's complement of the value
// times 10^scale) with math/big, independently of the encoder.
func decodeDecimal(b []byte, scale int64) *big.Rat {
	be := slices.Clone(b)
	slices.Reverse(be)
	n := new(big.Int).SetBytes(be)
	if len(be) > 0 && be[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(be))))
	}
	return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil))
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func allKindsRow() schemas.Row {
	return schemas.Row{
		int64(-42), true, 2.5, "héllo", []byte{0, 1, 2},
		time.Date(2024, 3, 1, 22, 0, 0, 123456000, time.UTC),
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		rat("-123.45"),
		rat("123456789012345678901234567890.12345678901234567890"),
		[]any{"a", "b"},
		[]any{int64(1), int64(-2), int64(300)},
		map[string]any{"age": int64(30), "email": "a@b"},
		[]any{map[string]any{"sku": "x", "qty": int64(2)}, map[string]any{"sku": "y", "qty": nil}},
		map[string]any{"b": int64(2), "a": int64(1)},
		map[string]any{"z": []any{int64(1), "x", nil}, "a": map[string]any{"<k>": true}, "f": 1.5},
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	table, err := tableSchemaFor(allKinds)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEncoder(t, table, allKinds)
	row := allKindsRow()
	b, err := e.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, e, b)

	if got := get(t, m, "id").Int(); got != -42 {
		t.Errorf("id = %d", got)
	}
	if !get(t, m, "ok").Bool() {
		t.Error("ok = false")
	}
	if got := get(t, m, "score").Float(); got != 2.5 {
		t.Errorf("score = %v", got)
	}
	if got := get(t, m, "name").String(); got != "héllo" {
		t.Errorf("name = %q", got)
	}
	if got := get(t, m, "raw").Bytes(); !bytes.Equal(got, []byte{0, 1, 2}) {
		t.Errorf("raw = %x", got)
	}
	if got, want := get(t, m, "ts").Int(), row[5].(time.Time).UnixMicro(); got != want {
		t.Errorf("ts = %d, want %d", got, want)
	}
	if got := get(t, m, "day").Int(); got != 19782 { // 2024-02-29
		t.Errorf("day = %d", got)
	}
	if got := decodeDecimal(get(t, m, "amount").Bytes(), 9); got.Cmp(rat("-123.45")) != 0 {
		t.Errorf("amount = %s", got.FloatString(9))
	}
	if got := decodeDecimal(get(t, m, "huge").Bytes(), 38); got.Cmp(row[8].(*big.Rat)) != 0 {
		t.Errorf("huge = %s", got.FloatString(38))
	}
	tags := get(t, m, "tags").List()
	if tags.Len() != 2 || tags.Get(0).String() != "a" || tags.Get(1).String() != "b" {
		t.Errorf("tags = %v", tags)
	}
	counts := get(t, m, "counts").List()
	if counts.Len() != 3 || counts.Get(0).Int() != 1 || counts.Get(1).Int() != -2 || counts.Get(2).Int() != 300 {
		t.Errorf("counts = %v", counts)
	}
	if !field(t, m, "counts").IsPacked() || !hasWireType(b, field(t, m, "counts").Number(), protowire.BytesType) {
		t.Error("counts is not written packed, as its descriptor says")
	}
	user := get(t, m, "user").Message()
	if get(t, user, "age").Int() != 30 || get(t, user, "email").String() != "a@b" {
		t.Errorf("user = %v", user)
	}
	items := get(t, m, "items").List()
	if items.Len() != 2 {
		t.Fatalf("items = %v", items)
	}
	it0, it1 := items.Get(0).Message(), items.Get(1).Message()
	if get(t, it0, "sku").String() != "x" || get(t, it0, "qty").Int() != 2 || get(t, it1, "sku").String() != "y" || it1.Has(field(t, it1, "qty")) {
		t.Errorf("items = %v", items)
	}
	attrs := get(t, m, "attrs").List()
	var entries []string
	for i := range attrs.Len() {
		en := attrs.Get(i).Message()
		entries = append(entries, fmt.Sprintf("%s=%d", get(t, en, "key").String(), get(t, en, "value").Int()))
	}
	if got := strings.Join(entries, " "); got != "a=1 b=2" {
		t.Errorf("attrs = %s", got)
	}
	if got, want := get(t, m, "extra").String(), `{"a":{"<k>":true},"f":1.5,"z":[1,"x",null]}`; got != want {
		t.Errorf("extra = %s, want %s", got, want)
	}

	// A row of nulls sets only the REQUIRED fields.
	nulls := slices.Clone(row)
	for i, f := range allKinds.Fields {
		if f.Nullable {
			nulls[i] = nil
		}
	}
	b, err = e.Encode(nil, nulls)
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	decode(t, e, b).Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		set = append(set, string(fd.Name()))
		return true
	})
	slices.Sort(set) // dynamicpb ranges over fields in a random order
	if got := strings.Join(set, " "); got != "id ts" {
		t.Errorf("a row of nulls sets %s, want id ts", got)
	}
}

// hasWireType reports whether field num occurs in the message b with wire type wt.
func hasWireType(b []byte, num protowire.Number, wt protowire.Type) bool {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return false
		}
		if n == num && typ == wt {
			return true
		}
		b = b[l:]
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return false
		}
		b = b[l:]
	}
	return false
}

// encodeOne encodes v into a one-column table of column type col, from a field of type t.
func encodeOne(t *testing.T, col *bq.FieldSchema, ft schemas.Type, v any) (protoreflect.Value, error) {
	t.Helper()
	col.Name = "v"
	e := mustEncoder(t, bq.Schema{col}, schemas.New(schemas.Field{Name: "v", Type: ft, Nullable: true}))
	b, err := e.Encode(nil, schemas.Row{v})
	if err != nil {
		return protoreflect.Value{}, err
	}
	return get(t, decode(t, e, b), "v"), nil
}

func TestEncodeTimestamps(t *testing.T) {
	// TIMESTAMP: int64 microseconds since the Unix epoch
	// (https://cloud.google.com/bigquery/docs/supported-data-types).
	ny, _ := time.LoadLocation("America/New_York")
	for _, tc := range []struct {
		in   time.Time
		want int64
		err  string
	}{
		{in: time.Unix(0, 1000), want: 1},
		{in: time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC), want: -1},
		{in: time.Date(1969, 12, 31, 23, 59, 59, 999999500, time.UTC), want: -1}, // below µs: towards the past
		{in: time.Unix(0, 1999), want: 1},
		{in: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), want: -2208988800000000},
		{in: time.Date(2024, 3, 1, 17, 0, 0, 0, ny), want: 1709330400000000},
		{in: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), want: -62135596800000000},
		{in: time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), want: 253402300799999999},
		{in: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), err: `field "v" holds 10000-01-01T00:00:00Z, which is outside BigQuery's range (years 1 to 9999)`},
		{in: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), err: "outside BigQuery's range"},
	} {
		got, err := encodeOne(t, &bq.FieldSchema{Type: bq.TimestampFieldType}, typ(schemas.Timestamp), tc.in)
		checkResult(t, tc.in, err, tc.err, func() {
			if got.Int() != tc.want {
				t.Errorf("%s: got %d, want %d", tc.in, got.Int(), tc.want)
			}
		})
	}
}

func checkResult(t *testing.T, in any, err error, wantErr string, check func()) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%v: %v", in, err)
	case wantErr != "" && err == nil:
		t.Errorf("%v: no error, want %q", in, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%v: error %q, want %q", in, err, wantErr)
	case wantErr == "":
		check()
	}
}

func TestEncodeDates(t *testing.T) {
	// DATE: int32 days since the Unix epoch, -719162 (0001-01-01) to 2932896 (9999-12-31)
	// (https://cloud.google.com/bigquery/docs/supported-data-types).
	for _, tc := range []struct {
		y    int
		m    time.Month
		d    int
		want int64
	}{
		{1970, 1, 1, 0}, {1969, 12, 31, -1}, {2000, 2, 29, 11016},
		{1, 1, 1, -719162}, {9999, 12, 31, 2932896}, {1582, 10, 15, -141427},
	} {
		in := time.Date(tc.y, tc.m, tc.d, 0, 0, 0, 0, time.UTC)
		got, err := encodeOne(t, &bq.FieldSchema{Type: bq.DateFieldType}, typ(schemas.Date), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Int() != tc.want {
			t.Errorf("%s: got %d, want %d", in.Format(time.DateOnly), got.Int(), tc.want)
		}
	}
}

func TestEncodeCivilTimes(t *testing.T) {
	// DATETIME and TIME: int64 packed as CivilTimeEncoder does; the expected values are from
	// ZetaSQL's CivilTimeEncoderTest
	// (https://cloud.google.com/bigquery/docs/supported-data-types).
	dt := &bq.FieldSchema{Type: bq.DateTimeFieldType}
	tm := &bq.FieldSchema{Type: bq.TimeFieldType}
	for _, tc := range []struct {
		col  *bq.FieldSchema
		t    schemas.Type
		in   any
		want int64
		err  string
	}{
		{col: dt, t: typ(schemas.Timestamp), in: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), want: 0x4420000 << 20},
		{col: dt, t: typ(schemas.Timestamp), in: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), want: 0x9C3F3F7EFB << 20},
		{col: dt, t: typ(schemas.Timestamp), in: time.Date(1, 1, 1, 13, 14, 15, 16000, time.UTC), want: 0x442D38F<<20 | 16},
		{col: dt, t: typ(schemas.Date), in: time.Date(1, 2, 3, 0, 0, 0, 0, time.UTC), want: 0x4860000 << 20},
		{col: dt, t: typ(schemas.String), in: "0001-02-03 00:01:02", want: 0x4860042 << 20},
		{col: dt, t: typ(schemas.String), in: "0001-01-01T13:14:15.000016", want: 0x442D38F<<20 | 16},
		{col: dt, t: typ(schemas.String), in: "0001-2-3", want: 0x4860000 << 20},
		{col: dt, t: typ(schemas.String), in: "2024-05-01 12:30:00Z", err: `holds "2024-05-01 12:30:00Z", which is not a DATETIME literal`},
		{col: dt, t: typ(schemas.String), in: "2024-05-01 12:30:00.1234567", err: "not a DATETIME literal"},
		{col: tm, t: typ(schemas.String), in: "13:14:15.016", want: 0xD38F03E80},
		{col: tm, t: typ(schemas.String), in: "00:01:02.003", want: 0x4200BB8},
		{col: tm, t: typ(schemas.String), in: "23:59:59.999999", want: 0x17EFBF423F},
		{col: tm, t: typ(schemas.String), in: "24:00:00", err: "not a TIME literal"},
	} {
		got, err := encodeOne(t, tc.col, tc.t, tc.in)
		checkResult(t, tc.in, err, tc.err, func() {
			if got.Int() != tc.want {
				t.Errorf("%v: got %#x, want %#x", tc.in, got.Int(), tc.want)
			}
		})
	}
}

func TestEncodeDecimals(t *testing.T) {
	// NUMERIC and BIGNUMERIC: bytes, the little-endian two's complement of the value times
	// 10^9 or 10^38, as BigDecimalByteStringEncoder writes them
	// (https://cloud.google.com/bigquery/docs/supported-data-types).
	num := func() *bq.FieldSchema { return &bq.FieldSchema{Type: bq.NumericFieldType} }
	bignum := func() *bq.FieldSchema { return &bq.FieldSchema{Type: bq.BigNumericFieldType} }
	num52 := func() *bq.FieldSchema { return &bq.FieldSchema{Type: bq.NumericFieldType, Precision: 5, Scale: 2} }
	const bigMax = "578960446186580977117854925043439539266.34992332820282019728792003956564819967"
	for _, tc := range []struct {
		col   func() *bq.FieldSchema
		in    any
		bytes []byte // exact encoding, when given
		err   string
	}{
		{col: num, in: rat("0"), bytes: []byte{0}},
		{col: num, in: rat("1.2"), bytes: []byte{0x00, 0x8C, 0x86, 0x47}},
		{col: num, in: rat("-1"), bytes: []byte{0x00, 0x36, 0x65, 0xC4}},
		{col: num, in: rat("99999999999999999999999999999.999999999")},
		{col: num, in: rat("-99999999999999999999999999999.999999999")},
		{col: num, in: rat("123456789012345678901234567.5")}, // beyond int64
		{col: num, in: rat("100000000000000000000000000000"), err: `holds 100000000000000000000000000000, which is out of the range of NUMERIC`},
		{col: num, in: rat("0.0000000001"), err: "holds 0.0000000001, which has more than 9 digits after the decimal point (the column is NUMERIC)"},
		{col: num, in: big0().SetFrac64(1, 3), err: "more than 9 digits after the decimal point"},
		{col: num, in: int64(math.MaxInt64)},
		{col: num, in: int64(math.MinInt64)},
		{col: num52, in: rat("999.99")},
		{col: num52, in: rat("-999.99")},
		{col: num52, in: rat("1000"), err: "out of the range of NUMERIC(5, 2)"},
		{col: num52, in: int64(1000), err: "holds 1000, which is out of the range of NUMERIC(5, 2)"},
		{col: num52, in: rat("1.001"), err: "more than 2 digits after the decimal point (the column is NUMERIC(5, 2))"},
		{col: bignum, in: rat(bigMax)},
		{col: bignum, in: rat("-" + bigMax[:len(bigMax)-1] + "8")},
		{col: bignum, in: new(big.Rat).Add(rat(bigMax), rat("1e-38")), err: "out of the range of BIGNUMERIC"},
		{col: bignum, in: rat("-" + bigMax[:len(bigMax)-1] + "9"), err: "out of the range of BIGNUMERIC"},
		{col: bignum, in: rat("1e-38"), bytes: []byte{1}},
		{col: bignum, in: rat("1e-39"), err: "more than 38 digits"},
		{col: bignum, in: int64(math.MinInt64)},
		{col: bignum, in: "1.5", err: `holds "1.5", which is not a decimal`},
	} {
		ft := decimal(76, 38)
		if _, isInt := tc.in.(int64); isInt {
			ft = typ(schemas.Int64)
		}
		got, err := encodeOne(t, tc.col(), ft, tc.in)
		checkResult(t, tc.in, err, tc.err, func() {
			b := got.Bytes()
			scale := int64(9)
			if tc.col().Type == bq.BigNumericFieldType {
				scale = 38
			}
			want := new(big.Rat)
			switch x := tc.in.(type) {
			case int64:
				want.SetInt64(x)
			case *big.Rat:
				want.Set(x)
			}
			if d := decodeDecimal(b, scale); d.Cmp(want) != 0 {
				t.Errorf("%v: decodes to %s", tc.in, d.FloatString(int(scale)))
			}
			if tc.bytes != nil && !bytes.Equal(b, tc.bytes) {
				t.Errorf("%v: got %x, want %x", tc.in, b, tc.bytes)
			}
			if len(b) > 1 && (b[len(b)-1] == 0 && b[len(b)-2]&0x80 == 0 || b[len(b)-1] == 0xff && b[len(b)-2]&0x80 != 0) {
				t.Errorf("%v: %x is not the shortest two's complement", tc.in, b)
			}
		})
	}
}

func big0() *big.Rat { return new(big.Rat) }

func TestEncodeOtherConversions(t *testing.T) {
	for _, tc := range []struct {
		col  bq.FieldType
		t    schemas.Kind
		in   any
		want any
		err  string
	}{
		{col: bq.FloatFieldType, t: schemas.Int64, in: int64(1 << 53), want: float64(1 << 53)},
		{col: bq.FloatFieldType, t: schemas.Int64, in: int64(1<<53 + 1), err: "holds 9007199254740993, which a FLOAT64 cannot hold exactly"},
		{col: bq.FloatFieldType, t: schemas.Int64, in: int64(math.MaxInt64), err: "cannot hold exactly"},
		{col: bq.FloatFieldType, t: schemas.Float64, in: math.Inf(-1), want: math.Inf(-1)},
		{col: bq.JSONFieldType, t: schemas.String, in: ` {"a": [1, 2]} `, want: ` {"a": [1, 2]} `},
		{col: bq.JSONFieldType, t: schemas.String, in: `{"a":`, err: `holds "{\"a\":", which is not JSON text`},
		{col: bq.JSONFieldType, t: schemas.Any, in: "<b>", want: `"<b>"`},
		{col: bq.JSONFieldType, t: schemas.Any, in: []any{math.NaN()}, err: "cannot be written as JSON"},
		{col: bq.StringFieldType, t: schemas.Any, in: map[string]any{"b": int64(1), "a": nil}, want: `{"a":null,"b":1}`},
		{col: bq.GeographyFieldType, t: schemas.String, in: "POINT(1 2)", want: "POINT(1 2)"},
		{col: bq.StringFieldType, t: schemas.String, in: "a\xffb", err: `holds "a\xffb", which is not valid UTF-8`},
		{col: bq.StringFieldType, t: schemas.String, in: "", want: ""},
		{col: bq.StringFieldType, t: schemas.String, in: int64(1), err: "holds 1, which is not a string"},
		{col: bq.BytesFieldType, t: schemas.Bytes, in: []byte{}, want: []byte{}},
		{col: bq.TimestampFieldType, t: schemas.Date, in: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), want: int64(-86400000000)},
	} {
		got, err := encodeOne(t, &bq.FieldSchema{Type: tc.col}, typ(tc.t), tc.in)
		checkResult(t, tc.in, err, tc.err, func() {
			var v any
			switch tc.want.(type) {
			case float64:
				v = got.Float()
			case string:
				v = got.String()
			case []byte:
				v = got.Bytes()
			case int64:
				v = got.Int()
			}
			if fmt.Sprint(v) != fmt.Sprint(tc.want) {
				t.Errorf("%v into %s: got %v, want %v", tc.in, tc.col, v, tc.want)
			}
		})
	}
}

func TestEncodeRowErrors(t *testing.T) {
	table, err := tableSchemaFor(allKinds)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEncoder(t, table, allKinds)
	for _, tc := range []struct {
		field int
		v     any
		err   string
	}{
		{0, nil, `field "id" is REQUIRED in the table, but the row holds null there`},
		{11, map[string]any{"age": int64(1)}, `field "user.email" is REQUIRED in the table, but the row holds null there`},
		{11, map[string]any{"age": "old", "email": "x"}, `field "user.age" holds "old", which is not an integer`},
		{9, []any{"a", nil}, `field "tags[1]" is null, which a BigQuery array cannot hold`},
		{10, []any{int64(1), 2.5}, `field "counts[1]" holds 2.5, which is not an integer`},
		{12, []any{map[string]any{"sku": "a"}, map[string]any{"sku": int64(5)}}, `field "items[1].sku" holds 5, which is not a string`},
		{13, map[string]any{"k": "x"}, `field "attrs[k]" holds "x", which is not an integer`},
		{7, rat("1.0000000001"), `field "amount" holds 1.0000000001, which has more than 9 digits after the decimal point (the column is NUMERIC)`},
		{5, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), `field "ts" holds 10000-01-01T00:00:00Z, which is outside BigQuery's range (years 1 to 9999)`},
		{3, strings.Repeat("x", 100), `field "name" holds "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"..., which is not valid UTF-8`},
	} {
		row := allKindsRow()
		row[tc.field] = tc.v
		if tc.field == 3 {
			row[3] = strings.Repeat("x", 100) + "\xff"
		}
		dst := []byte("earlier rows")
		out, err := e.Encode(dst, row)
		if err == nil || err.Error() != tc.err {
			t.Errorf("field %d = %v: error %v, want %s", tc.field, tc.v, err, tc.err)
		}
		if string(out) != "earlier rows" {
			t.Errorf("field %d = %v: dst became %q", tc.field, tc.v, out)
		}
	}
	if _, err := e.Encode(nil, schemas.Row{int64(1)}); err == nil {
		t.Error("a row shorter than its schema encoded")
	}
}

func TestEncodeIntoExistingTable(t *testing.T) {
	// The table orders and names its columns its own way, has columns the rows lack (one of a
	// type the descriptor cannot hold) and one whose name is not a proto name.
	table := bq.Schema{
		{Name: "spare", Type: bq.IntervalFieldType},
		{Name: "N", Type: "INT64", Required: true},
		{Name: "event-id", Type: bq.StringFieldType},
		{Name: "note", Type: bq.StringFieldType},
	}
	in := schemas.New(
		schemas.Field{Name: "Event-ID", Type: typ(schemas.String)},
		schemas.Field{Name: "n", Type: typ(schemas.Int64)},
	)
	e := mustEncoder(t, table, in)
	if got := len(e.Descriptor().GetField()); got != 3 {
		t.Errorf("descriptor has %d fields, want 3 (no INTERVAL)", got)
	}
	b, err := e.Encode(nil, schemas.Row{"abc", int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, e, b)
	fds := m.Descriptor().Fields()
	if got := m.Get(fds.ByNumber(1)).Int(); got != 7 {
		t.Errorf("N = %d", got)
	}
	if id := fds.ByNumber(2); id.Name() == "event-id" || m.Get(id).String() != "abc" {
		t.Errorf("event-id: field %s holds %q", id.Name(), m.Get(id).String())
	}
	if m.Has(fds.ByNumber(3)) {
		t.Error("note is set")
	}
}

// TestEncodeLongNested covers records and packed runs whose length takes 2 and 3 bytes.
func TestEncodeLongNested(t *testing.T) {
	table, err := tableSchemaFor(allKinds)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEncoder(t, table, allKinds)
	for _, n := range []int{100, 127, 128, 200, 16383, 20000} {
		row := allKindsRow()
		row[11] = map[string]any{"age": int64(1), "email": strings.Repeat("e", n)}
		counts := make([]any, n/10)
		for i := range counts {
			counts[i] = int64(i * 1000)
		}
		row[10] = counts
		row[12] = []any{map[string]any{"sku": strings.Repeat("s", n)}, map[string]any{"sku": "short"}}
		b, err := e.Encode([]byte("x"), row)
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, e, b[1:])
		if got := get(t, get(t, m, "user").Message(), "email").String(); len(got) != n {
			t.Errorf("%d: email has %d bytes", n, len(got))
		}
		if got := get(t, m, "counts").List(); got.Len() != len(counts) || got.Get(got.Len()-1).Int() != int64((len(counts)-1)*1000) {
			t.Errorf("%d: counts has %d values", n, got.Len())
		}
		items := get(t, m, "items").List()
		if items.Len() != 2 || len(get(t, items.Get(0).Message(), "sku").String()) != n || get(t, items.Get(1).Message(), "sku").String() != "short" {
			t.Errorf("%d: items = %v", n, items)
		}
		if get(t, m, "extra").String() == "" {
			t.Errorf("%d: the fields after the long ones are lost", n)
		}
	}
}

func TestEncodeConcurrent(t *testing.T) {
	table, err := tableSchemaFor(allKinds)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEncoder(t, table, allKinds)
	want, err := e.Encode(nil, allKindsRow())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			var buf []byte
			for range 200 {
				var err error
				if buf, err = e.Encode(buf[:0], allKindsRow()); err != nil || !bytes.Equal(buf, want) {
					errs <- fmt.Errorf("got %x, %v", buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// gameEvent is a GAME_EVENT-like row of about 1 KiB: ids, timestamps, strings, numbers.
var gameEvent = schemas.New(
	schemas.Field{Name: "eventId", Type: typ(schemas.String)},
	schemas.Field{Name: "eventTimestamp", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "receivedAt", Type: typ(schemas.Timestamp), Nullable: true},
	schemas.Field{Name: "eventDate", Type: typ(schemas.Date), Nullable: true},
	schemas.Field{Name: "ipv4", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "ipv6", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "country", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "username", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "quest", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "score", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "level", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "completed", Type: typ(schemas.Bool), Nullable: true},
	schemas.Field{Name: "playSeconds", Type: typ(schemas.Float64), Nullable: true},
	schemas.Field{Name: "revenue", Type: decimal(10, 2), Nullable: true},
	schemas.Field{Name: "sessionId", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "userAgent", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "message", Type: typ(schemas.String), Nullable: true},
)

func gameEventRow() schemas.Row {
	ts := time.Date(2024, 5, 1, 12, 30, 0, 123456000, time.UTC)
	return schemas.Row{
		"1b4e28ba-2fa1-11d2-883f-0016d3cca427", ts, ts.Add(850 * time.Millisecond),
		time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), "203.0.113.195", "2001:db8:85a3::8a2e:370:7334",
		"Netherlands", "brave_otter_42", "Ghosts of Perdition", int64(8731), int64(17), true, 1234.75,
		rat("4.99"), "6fa459ea-ee8a-3ca4-894e-db77e160355e",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
		strings.Repeat("The party reached the gate of the low road after the storm; ", 11),
	}
}

func BenchmarkEncode(b *testing.B) {
	table, err := tableSchemaFor(gameEvent)
	if err != nil {
		b.Fatal(err)
	}
	e := mustEncoder(b, table, gameEvent)
	row := gameEventRow()
	buf, err := e.Encode(nil, row)
	if err != nil {
		b.Fatal(err)
	}
	decode(b, e, buf)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = e.Encode(buf[:0], row); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDynamicpb encodes the same row through dynamicpb, for comparison.
func BenchmarkEncodeDynamicpb(b *testing.B) {
	table, err := tableSchemaFor(gameEvent)
	if err != nil {
		b.Fatal(err)
	}
	e := mustEncoder(b, table, gameEvent)
	md := messageType(b, e.Descriptor())
	revenue := newDecimalSpec(table[13])
	row := gameEventRow()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		m := dynamicpb.NewMessage(md)
		for i, v := range row {
			fd := md.Fields().ByNumber(protowire.Number(i + 1))
			var pv protoreflect.Value
			switch x := v.(type) {
			case string:
				pv = protoreflect.ValueOfString(x)
			case int64:
				pv = protoreflect.ValueOfInt64(x)
			case bool:
				pv = protoreflect.ValueOfBool(x)
			case float64:
				pv = protoreflect.ValueOfFloat64(x)
			case time.Time:
				if fd.Kind() == protoreflect.Int32Kind {
					pv = protoreflect.ValueOfInt32(int32(x.Unix() / 86400))
				} else {
					pv = protoreflect.ValueOfInt64(x.UnixMicro())
				}
			case *big.Rat:
				d, err := revenue.put(nil, x)
				if err != nil {
					b.Fatal(err)
				}
				v, _ := protowire.ConsumeBytes(d)
				pv = protoreflect.ValueOfBytes(v)
			}
			m.Set(fd, pv)
		}
		if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}
