package protobuf

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

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

type fieldType = descriptorpb.FieldDescriptorProto_Type

func fieldOf(name string, num int32, typ fieldType, typeName string, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

const (
	optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	repeat   = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	required = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED
)

// testMessages returns t.All (proto3: every scalar kind, packed and map fields, messages, a
// timestamp and a wrapper) and t.P2 (proto2: a required field, an unpacked repeated field and
// a group).
func testMessages(t testing.TB) (all, p2 protoreflect.MessageDescriptor) {
	t.Helper()
	type ft = descriptorpb.FieldDescriptorProto_Type
	f := func(name string, num int32, typ ft) *descriptorpb.FieldDescriptorProto {
		return fieldOf(name, num, typ, "", optional)
	}
	entry := func(name string, key, val ft) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			Field: []*descriptorpb.FieldDescriptorProto{f("key", 1, key), f("value", 2, val)}}
	}
	file3 := &descriptorpb.FileDescriptorProto{
		Name: proto.String("t.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("E"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("ZERO"), Number: proto.Int32(0)}, {Name: proto.String("NEG"), Number: proto.Int32(-2)}}}},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Sub"), Field: []*descriptorpb.FieldDescriptorProto{
				f("name", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING),
				fieldOf("xs", 2, descriptorpb.FieldDescriptorProto_TYPE_SINT64, "", repeat)}},
			{Name: proto.String("All"), Field: []*descriptorpb.FieldDescriptorProto{
				f("i32", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32), f("i64", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64),
				f("u32", 3, descriptorpb.FieldDescriptorProto_TYPE_UINT32), f("u64", 4, descriptorpb.FieldDescriptorProto_TYPE_UINT64),
				f("s32", 5, descriptorpb.FieldDescriptorProto_TYPE_SINT32), f("s64", 6, descriptorpb.FieldDescriptorProto_TYPE_SINT64),
				f("f32", 7, descriptorpb.FieldDescriptorProto_TYPE_FIXED32), f("f64", 8, descriptorpb.FieldDescriptorProto_TYPE_FIXED64),
				f("sf32", 9, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32), f("sf64", 10, descriptorpb.FieldDescriptorProto_TYPE_SFIXED64),
				f("fl", 11, descriptorpb.FieldDescriptorProto_TYPE_FLOAT), f("db", 12, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE),
				f("b", 13, descriptorpb.FieldDescriptorProto_TYPE_BOOL), f("s", 14, descriptorpb.FieldDescriptorProto_TYPE_STRING),
				f("by", 15, descriptorpb.FieldDescriptorProto_TYPE_BYTES),
				fieldOf("e", 16, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".t.E", optional),
				fieldOf("ri32", 17, descriptorpb.FieldDescriptorProto_TYPE_INT32, "", repeat),
				fieldOf("rs", 18, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", repeat),
				fieldOf("m", 19, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.All.MEntry", repeat),
				fieldOf("mb", 20, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.All.MbEntry", repeat),
				fieldOf("sub", 21, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.Sub", optional),
				fieldOf("subs", 22, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".t.Sub", repeat),
				fieldOf("ts", 23, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp", optional),
				fieldOf("w", 24, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.StringValue", optional),
			}, NestedType: []*descriptorpb.DescriptorProto{
				entry("MEntry", descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_STRING),
				entry("MbEntry", descriptorpb.FieldDescriptorProto_TYPE_BOOL, descriptorpb.FieldDescriptorProto_TYPE_INT64),
			}},
		},
	}
	file2 := &descriptorpb.FileDescriptorProto{
		Name: proto.String("p2.proto"), Package: proto.String("t"), Syntax: proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("P2"), Field: []*descriptorpb.FieldDescriptorProto{
			fieldOf("id", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, "", required),
			fieldOf("note", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", optional),
			fieldOf("xs", 3, descriptorpb.FieldDescriptorProto_TYPE_INT32, "", repeat),
			fieldOf("g", 4, descriptorpb.FieldDescriptorProto_TYPE_GROUP, ".t.P2.G", optional),
		}, NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("G"), Field: []*descriptorpb.FieldDescriptorProto{
			fieldOf("a", 5, descriptorpb.FieldDescriptorProto_TYPE_INT32, "", optional)}}}}},
	}
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto),
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
		file3, file2,
	}})
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
