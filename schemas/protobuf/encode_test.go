package protobuf

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluicehq/sluice/schemas"
)

// testProtos are t.All (proto3: every scalar kind, packed and map fields, messages, a
// timestamp and a wrapper) and t.P2 (proto2: a required field, an unpacked repeated field and
// a group), as protoc would describe them.
var testProtos = []string{`
name: "t.proto" package: "t" syntax: "proto3"
dependency: "google/protobuf/timestamp.proto" dependency: "google/protobuf/wrappers.proto"
enum_type { name: "E" value { name: "ZERO" number: 0 } value { name: "NEG" number: -2 } }
message_type { name: "Sub"
  field { name: "name" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "xs" number: 2 type: TYPE_SINT64 label: LABEL_REPEATED } }
message_type { name: "All"
  field { name: "i32" number: 1 type: TYPE_INT32 label: LABEL_OPTIONAL }
  field { name: "i64" number: 2 type: TYPE_INT64 label: LABEL_OPTIONAL }
  field { name: "u32" number: 3 type: TYPE_UINT32 label: LABEL_OPTIONAL }
  field { name: "u64" number: 4 type: TYPE_UINT64 label: LABEL_OPTIONAL }
  field { name: "s32" number: 5 type: TYPE_SINT32 label: LABEL_OPTIONAL }
  field { name: "s64" number: 6 type: TYPE_SINT64 label: LABEL_OPTIONAL }
  field { name: "f32" number: 7 type: TYPE_FIXED32 label: LABEL_OPTIONAL }
  field { name: "f64" number: 8 type: TYPE_FIXED64 label: LABEL_OPTIONAL }
  field { name: "sf32" number: 9 type: TYPE_SFIXED32 label: LABEL_OPTIONAL }
  field { name: "sf64" number: 10 type: TYPE_SFIXED64 label: LABEL_OPTIONAL }
  field { name: "fl" number: 11 type: TYPE_FLOAT label: LABEL_OPTIONAL }
  field { name: "db" number: 12 type: TYPE_DOUBLE label: LABEL_OPTIONAL }
  field { name: "b" number: 13 type: TYPE_BOOL label: LABEL_OPTIONAL }
  field { name: "s" number: 14 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "by" number: 15 type: TYPE_BYTES label: LABEL_OPTIONAL }
  field { name: "e" number: 16 type: TYPE_ENUM type_name: ".t.E" label: LABEL_OPTIONAL }
  field { name: "ri32" number: 17 type: TYPE_INT32 label: LABEL_REPEATED }
  field { name: "rs" number: 18 type: TYPE_STRING label: LABEL_REPEATED }
  field { name: "m" number: 19 type: TYPE_MESSAGE type_name: ".t.All.MEntry" label: LABEL_REPEATED }
  field { name: "mb" number: 20 type: TYPE_MESSAGE type_name: ".t.All.MbEntry" label: LABEL_REPEATED }
  field { name: "sub" number: 21 type: TYPE_MESSAGE type_name: ".t.Sub" label: LABEL_OPTIONAL }
  field { name: "subs" number: 22 type: TYPE_MESSAGE type_name: ".t.Sub" label: LABEL_REPEATED }
  field { name: "ts" number: 23 type: TYPE_MESSAGE type_name: ".google.protobuf.Timestamp" label: LABEL_OPTIONAL }
  field { name: "w" number: 24 type: TYPE_MESSAGE type_name: ".google.protobuf.StringValue" label: LABEL_OPTIONAL }
  nested_type { name: "MEntry" options { map_entry: true }
    field { name: "key" number: 1 type: TYPE_INT32 label: LABEL_OPTIONAL }
    field { name: "value" number: 2 type: TYPE_STRING label: LABEL_OPTIONAL } }
  nested_type { name: "MbEntry" options { map_entry: true }
    field { name: "key" number: 1 type: TYPE_BOOL label: LABEL_OPTIONAL }
    field { name: "value" number: 2 type: TYPE_INT64 label: LABEL_OPTIONAL } } }`, `
name: "p2.proto" package: "t" syntax: "proto2"
message_type { name: "P2"
  field { name: "id" number: 1 type: TYPE_INT64 label: LABEL_REQUIRED }
  field { name: "note" number: 2 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "xs" number: 3 type: TYPE_INT32 label: LABEL_REPEATED }
  field { name: "g" number: 4 type: TYPE_GROUP type_name: ".t.P2.G" label: LABEL_OPTIONAL }
  nested_type { name: "G" field { name: "a" number: 5 type: TYPE_INT32 label: LABEL_OPTIONAL } } }`,
}

// testMessages returns the messages of testProtos.
func testMessages(t testing.TB) (all, p2 protoreflect.MessageDescriptor) {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto),
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
	}}
	for _, text := range testProtos {
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := prototext.Unmarshal([]byte(text), fdp); err != nil {
			t.Fatal(err)
		}
		set.File = append(set.File, fdp)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	find := func(name protoreflect.FullName) protoreflect.MessageDescriptor {
		d, err := files.FindDescriptorByName(name)
		if err != nil {
			t.Fatal(err)
		}
		return d.(protoreflect.MessageDescriptor)
	}
	return find("t.All"), find("t.P2")
}

func mustSchema(t testing.TB, md protoreflect.MessageDescriptor) *schemas.Schema {
	t.Helper()
	s, err := Schema(md)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fullRow is a row of t.All with every field set, at the edges of each kind.
func fullRow() schemas.Row {
	return schemas.Row{
		int64(math.MinInt32), int64(math.MinInt64), int64(math.MaxUint32), int64(math.MaxInt64), int64(-3), int64(math.MinInt64),
		int64(7), int64(1 << 40), int64(-7), int64(-1 << 40), 1.5, -2.25, true, "héllo", []byte{0, 0xff},
		"NEG", []any{int64(-1), int64(0), int64(300)}, []any{"a", ""},
		map[string]any{"-5": "neg", "7": ""}, map[string]any{"true": int64(1), "false": int64(0)},
		map[string]any{"name": "s", "xs": []any{int64(-1), int64(1)}},
		[]any{map[string]any{"name": "a", "xs": []any{}}, map[string]any{"name": strings.Repeat("long ", 40), "xs": []any{int64(5)}}},
		time.Date(1969, 7, 20, 20, 17, 40, 5000, time.UTC), "",
	}
}

// Rows written by the Encoder read back, through dynamicpb, as the same rows: every kind,
// negative numbers, zigzag and fixed encodings, packed and unpacked arrays, maps of each key
// kind, nested messages long enough for 2-byte lengths, timestamps, wrappers and groups.
func TestEncodeRoundTrip(t *testing.T) {
	all, p2 := testMessages(t)
	for _, c := range []struct {
		md  protoreflect.MessageDescriptor
		row schemas.Row
	}{
		{all, fullRow()},
		{all, schemas.Row{int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), 0.0, 0.0, false, "", []byte{},
			"ZERO", []any{}, []any{}, map[string]any{}, map[string]any{}, nil, []any{}, nil, nil}},
		{p2, schemas.Row{int64(-1), "n", []any{int64(1), int64(-2)}, map[string]any{"a": int64(9)}}},
		{p2, schemas.Row{int64(0), nil, []any{}, nil}},
	} {
		s := mustSchema(t, c.md)
		enc, err := NewEncoder(c.md, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := enc.Append([]byte("x"), c.row)
		if err != nil {
			t.Fatalf("%v: %v", c.row, err)
		}
		if b[0] != 'x' {
			t.Fatal("the bytes before the message are lost")
		}
		// A row that gained a field at its end mid-run writes the same message.
		if longer, err := enc.Append(nil, append(c.row[:len(c.row):len(c.row)], "added")); err != nil || string(longer) != string(b[1:]) {
			t.Errorf("%s: a longer row wrote %x (%v), want %x", c.md.FullName(), longer, err, b[1:])
		}
		got, err := NewDecoder(c.md).Decode(b[1:])
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.row) {
			t.Errorf("%s: read back\n%v\nwant\n%v", c.md.FullName(), got, c.row)
		}
		// What proto.Marshal writes of the same message is as long: zeros are left out alike.
		m := dynamicpb.NewMessage(c.md)
		if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(b[1:], m); err != nil {
			t.Fatal(err)
		}
		if want, err := proto.Marshal(m); err != nil || len(want) != len(b)-1 {
			t.Errorf("%s: %d bytes, proto.Marshal writes %d (%v)", c.md.FullName(), len(b)-1, len(want), err)
		}
	}
}

// Values of no fixed type (schemaless input) are written by the descriptor's kinds.
func TestEncodeAnyValues(t *testing.T) {
	all, _ := testMessages(t)
	in := schemas.New(schemas.Field{Name: "sub", Type: schemas.Type{Kind: schemas.Any}}, schemas.Field{Name: "db", Type: schemas.Type{Kind: schemas.Any}})
	enc, err := NewEncoder(all, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Append(nil, schemas.Row{map[string]any{"xs": []any{int64(2)}, "name": "n"}, int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	row, err := NewDecoder(all).Decode(b)
	if err != nil || fmt.Sprint(row[20], row[11]) != "map[name:n xs:[2]] 3" {
		t.Errorf("read back %v %v, %v", row[20], row[11], err)
	}
	if _, err := enc.Append(nil, schemas.Row{map[string]any{"nope": int64(1)}, nil}); err == nil || err.Error() != `field sub: message t.Sub has no field "nope"` {
		t.Errorf("an unknown key: %v", err)
	}
}

// Row values a message cannot hold are errors that say where, and dst comes back as given.
func TestEncodeErrors(t *testing.T) {
	all, p2 := testMessages(t)
	s := mustSchema(t, all)
	enc, err := NewEncoder(all, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field int
		v     any
		want  string
	}{
		{0, int64(math.MaxInt32 + 1), "field i32: 2147483648 does not fit int32"},
		{2, int64(-1), "field u32: -1 does not fit uint32"},
		{13, "a\xffb", "field s: the string is not valid UTF-8"},
		{12, "yes", "field b: bool takes a boolean, not a string value"},
		{15, "BLUE", `field e: enum t.E has no value "BLUE"`},
		{16, []any{int64(1), nil}, "field ri32: element 1: a repeated field cannot hold null"},
		{17, "x", "field rs: a repeated field takes an array, not a string value"},
		{18, map[string]any{"x": "y"}, `field m: key "x" is not an integer`},
		{18, map[string]any{"1": nil}, `field m: key "1": a map value cannot be null`},
		{19, map[string]any{"yes": int64(1)}, `field mb: key "yes" is not true or false`},
		{20, "x", "field sub: message t.Sub takes a struct, not a string value"},
		{21, []any{map[string]any{"name": "a", "xs": []any{"z"}}}, "field subs: element 0: field xs: element 0: sint64 takes an integer, not a string value"},
		{22, "noon", "field ts: google.protobuf.Timestamp takes a timestamp, not a string value"},
	} {
		row := fullRow()
		row[c.field] = c.v
		out, err := enc.Append([]byte("kept"), row)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.v, err, c.want)
		}
		if string(out) != "kept" {
			t.Errorf("%v: dst became %q", c.v, out)
		}
	}
	p2enc, err := NewEncoder(p2, mustSchema(t, p2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2enc.Append(nil, schemas.Row{nil, nil, nil, nil}); err == nil || err.Error() != "field id: a required field cannot be null" {
		t.Errorf("a null required field: %v", err)
	}
	if _, err := p2enc.Append(nil, schemas.Row{int64(1)}); err == nil {
		t.Error("a row shorter than its schema encoded")
	}
	_, err = NewEncoder(p2, schemas.New(schemas.Field{Name: "note", Type: schemas.Type{Kind: schemas.String}}), Options{})
	if err == nil || err.Error() != "field id: the message requires it, but the rows do not have it" {
		t.Errorf("a required field the rows lack: %v", err)
	}
}

// Writing a row of t.All, every kind (measure, do not assert: go test -run '^$' -bench .
// ./schemas/protobuf/).
func BenchmarkEncode(b *testing.B) {
	all, _ := testMessages(b)
	enc, err := NewEncoder(all, mustSchema(b, all), Options{})
	if err != nil {
		b.Fatal(err)
	}
	row := fullRow()
	buf, err := enc.Append(nil, row)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = enc.Append(buf[:0], row); err != nil {
			b.Fatal(err)
		}
	}
}
