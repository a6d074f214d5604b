package kafka

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// ordersProto is shop.proto, as protoc would describe it:
//
//	syntax = "proto3";
//	package shop;
//	import "google/protobuf/timestamp.proto";
//	import "google/protobuf/wrappers.proto";
//	enum Color { RED = 0; GREEN = 1; }
//	message Item { string sku = 1; int32 qty = 2; }
//	message Order {
//	  int64 id = 1;  string name = 2;  repeated string tags = 3;  Item item = 4;
//	  map<string, int64> counts = 5;  Color color = 6;  google.protobuf.Timestamp at = 7;
//	  google.protobuf.Int64Value maybe = 8;  optional double price = 9;  uint64 big = 10;
//	  repeated Item items = 11;  bytes raw = 12;
//	}
func ordersProto() *descriptorpb.FileDescriptorProto {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string, repeated bool) *descriptorpb.FieldDescriptorProto {
		label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		if repeated {
			label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		}
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(),
			JsonName: proto.String(name)}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	const (
		i64 = descriptorpb.FieldDescriptorProto_TYPE_INT64
		i32 = descriptorpb.FieldDescriptorProto_TYPE_INT32
		str = descriptorpb.FieldDescriptorProto_TYPE_STRING
		msg = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	)
	price := field("price", 9, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, "", false)
	price.Proto3Optional, price.OneofIndex = proto.Bool(true), proto.Int32(0)
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("shop.proto"), Package: proto.String("shop"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Color"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("RED"), Number: proto.Int32(0)}, {Name: proto.String("GREEN"), Number: proto.Int32(1)}}}},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Item"), Field: []*descriptorpb.FieldDescriptorProto{field("sku", 1, str, "", false), field("qty", 2, i32, "", false)}},
			{Name: proto.String("Order"), Field: []*descriptorpb.FieldDescriptorProto{
				field("id", 1, i64, "", false), field("name", 2, str, "", false), field("tags", 3, str, "", true),
				field("item", 4, msg, ".shop.Item", false), field("counts", 5, msg, ".shop.Order.CountsEntry", true),
				field("color", 6, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".shop.Color", false),
				field("at", 7, msg, ".google.protobuf.Timestamp", false), field("maybe", 8, msg, ".google.protobuf.Int64Value", false),
				price, field("big", 10, descriptorpb.FieldDescriptorProto_TYPE_UINT64, "", false),
				field("items", 11, msg, ".shop.Item", true), field("raw", 12, descriptorpb.FieldDescriptorProto_TYPE_BYTES, "", false),
			},
				NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("CountsEntry"), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
					Field: []*descriptorpb.FieldDescriptorProto{field("key", 1, str, "", false), field("value", 2, i64, "", false)}}},
				OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_price")}},
			},
		},
	}
}

// writeDescriptorSet writes shop.proto and its imports as a FileDescriptorSet and returns its
// path and the Order message.
func writeDescriptorSet(t testing.TB) (string, protoreflect.MessageDescriptor) {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto),
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
		ordersProto(),
	}}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName("shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	return writeSet(t, set), d.(protoreflect.MessageDescriptor)
}

// writeSet writes set into a file of the test's and returns its path.
func writeSet(t testing.TB, set *descriptorpb.FileDescriptorSet) string {
	t.Helper()
	data, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "set.pb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An order with every field set, and one with none, read through ReadFromKafka with format
// PROTO: the rows' schema follows the message, absent fields that can be absent are null, the
// others their defaults; a value that is not an Order, and one whose uint64 does not fit an
// integer, go to the error output with their positions.
func TestReadProto(t *testing.T) {
	path, md := writeDescriptorSet(t)
	values := orderValues(t, md)
	values = append(values[:2], []byte{0xff, 0xff}, values[2])
	topic := newTopic(t, 1)
	produce(t, topic, 0, values...)

	src, out, _, err := readSource(t, config(topic, "format: PROTO", "file_descriptor_path: "+path, "message_name: Order",
		"error_handling: {output: bad}", "auto_offset_reset_config: earliest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := src.out.String(), "{id integer, name string, tags array<string>, item struct<sku string, qty integer>?, "+
		"counts map<string, integer>, color string, at timestamp?, maybe integer?, price number?, big integer, items array<struct<sku string, qty integer>>, raw bytes}"; got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	var rows []string
	for _, r := range out.Rows(component.Main) {
		rows = append(rows, fmt.Sprint(r))
	}
	want := []string{
		"[7 ada [a b] map[qty:2 sku:x] map[k:3] GREEN 2026-11-30 12:00:00.000005 +0000 UTC -4 9.5 1099511627776 [map[qty:1 sku:y]] [0 1]]",
		"[0  [] <nil> map[] RED <nil> <nil> <nil> 0 [] []]",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n got %s\nwant %s", strings.Join(rows, "\n     "), strings.Join(want, "\n     "))
	}
	bad := fmt.Sprint(out.Rows("bad"))
	for _, w := range []string{"not a shop.Order message", "offset:2", "field big: 18446744073709551615 does not fit an integer", "offset:3"} {
		if !strings.Contains(bad, w) {
			t.Errorf("the error output lacks %q:\n%s", w, bad)
		}
	}
}

// Format PROTO's config problems, each at its key, with what to do.
func TestProtoConfigErrors(t *testing.T) {
	path, _ := writeDescriptorSet(t)
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"format: PROTO", "message_name: Order"}, "format PROTO needs file_descriptor_path"},
		{[]string{"format: PROTO", "file_descriptor_path: " + path}, "format PROTO needs message_name"},
		{[]string{"format: PROTO", "file_descriptor_path: " + path, "message_name: Nope"}, `has no message "Nope" (it has shop.Item, shop.Order)`},
		{[]string{"format: PROTO", "file_descriptor_path: /nonexistent.pb", "message_name: Order"}, "file_descriptor_path: open /nonexistent.pb"},
		{[]string{"format: JSON", "schema: {type: object}", "message_name: Order"}, "message_name is for format PROTO, and the format is JSON"},
	} {
		got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config("t", c.lines...))
		if !strings.Contains(got, c.want) {
			t.Errorf("%v: got\n%s\nwant %q", c.lines, got, c.want)
		}
	}
}

// orderValues returns shop.Order messages, encoded: one with every field set, one with none,
// and one whose uint64 does not fit an integer.
func orderValues(t testing.TB, md protoreflect.MessageDescriptor) [][]byte {
	t.Helper()
	full := dynamicpb.NewMessage(md)
	set := func(m *dynamicpb.Message, name string, v protoreflect.Value) {
		m.Set(md.Fields().ByName(protoreflect.Name(name)), v)
	}
	item := func(sku string, qty int32) protoreflect.Value {
		it := dynamicpb.NewMessage(md.Fields().ByName("item").Message())
		it.Set(it.Descriptor().Fields().ByName("sku"), protoreflect.ValueOfString(sku))
		it.Set(it.Descriptor().Fields().ByName("qty"), protoreflect.ValueOfInt32(qty))
		return protoreflect.ValueOfMessage(it)
	}
	set(full, "id", protoreflect.ValueOfInt64(7))
	set(full, "name", protoreflect.ValueOfString("ada"))
	tags := full.Mutable(md.Fields().ByName("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	set(full, "item", item("x", 2))
	full.Mutable(md.Fields().ByName("counts")).Map().Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfInt64(3))
	set(full, "color", protoreflect.ValueOfEnum(1))
	set(full, "at", protoreflect.ValueOfMessage(timestamppb.New(time.Date(2026, 11, 30, 12, 0, 0, 5000, time.UTC)).ProtoReflect()))
	set(full, "maybe", protoreflect.ValueOfMessage(wrapperspb.Int64(-4).ProtoReflect()))
	set(full, "price", protoreflect.ValueOfFloat64(9.5))
	set(full, "big", protoreflect.ValueOfUint64(1<<40))
	full.Mutable(md.Fields().ByName("items")).List().Append(item("y", 1))
	set(full, "raw", protoreflect.ValueOfBytes([]byte{0, 1}))
	overflow := dynamicpb.NewMessage(md)
	set(overflow, "big", protoreflect.ValueOfUint64(math.MaxUint64))
	var values [][]byte
	for _, m := range []proto.Message{full, dynamicpb.NewMessage(md), overflow} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, b)
	}
	return values
}

// Rows read from Order messages, written back with WriteToKafka's format PROTO and read again,
// are the same rows; and the bytes are the same message as the original.
func TestWriteProtoRoundTrip(t *testing.T) {
	path, md := writeDescriptorSet(t)
	lines := []string{"format: PROTO", "file_descriptor_path: " + path, "message_name: shop.Order"}
	src := build(t, "type: ReadFromKafka\nconfig:\n"+config("t", lines...)).Component.(*source)
	dec := src.format.NewDecoder()
	w := build(t, "type: WriteToKafka\nconfig:\n"+config("t", lines...), src.out).Component.(*sink)
	enc := w.format.NewEncoder()
	for i, v := range orderValues(t, md)[:2] {
		row, err := dec(v)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := enc([]byte{}, src.out, row) // a lane's buffer: an empty message is an empty value, not a tombstone
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		again, err := dec(b)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(again) != fmt.Sprint(row) {
			t.Errorf("message %d: read back\n%v\nwant\n%v", i, again, row)
		}
		orig, back := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
		if err := errors.Join(proto.Unmarshal(v, orig), proto.Unmarshal(b, back)); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(orig, back) {
			t.Errorf("message %d: wrote %v, want %v", i, back, orig)
		}
	}
}

// WriteToKafka's format PROTO checks the input against the message at build time, and a row
// value the message cannot take is a row error.
func TestWriteProtoErrors(t *testing.T) {
	path, _ := writeDescriptorSet(t)
	cfg := "type: WriteToKafka\nconfig:\n" + config("t", "format: PROTO", "file_descriptor_path: "+path, "message_name: Order")
	in := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.String}})
	if got := buildErrors(t, cfg, in); !strings.Contains(got, `message shop.Order does not fit input "in0": field "id" holds string values, but message shop.Order has integer there`) {
		t.Errorf("a string id: %s", got)
	}
	in = schemas.New(schemas.Field{Name: "nope", Type: schemas.Type{Kind: schemas.Int64}})
	if got := buildErrors(t, cfg, in); !strings.Contains(got, `field "nope" of the input is not in message shop.Order`) {
		t.Errorf("an unknown field: %s", got)
	}
	in = schemas.New(schemas.Field{Name: "color", Type: schemas.Type{Kind: schemas.String}}, schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Any}})
	enc := build(t, cfg, in).Component.(*sink).format.NewEncoder()
	for _, c := range []struct {
		row  schemas.Row
		want string
	}{
		{schemas.Row{"BLUE", nil}, `field color: enum shop.Color has no value "BLUE"`},
		{schemas.Row{"RED", []any{"a", nil}}, "field tags: element 1: a repeated field cannot hold null"},
		{schemas.Row{"RED", "a"}, "field tags: a repeated field takes an array, not a string value"},
	} {
		if _, _, err := enc(nil, in, c.row); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.row, err, c.want)
		}
	}
}

// A map key out of its field's range is a row error, not a panic; an enum number the
// descriptor does not name is written as read.
func TestWriteProtoMapKeysAndEnumNumbers(t *testing.T) {
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
		Name: proto.String("m.proto"), Package: proto.String("m"), Syntax: proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("E"), Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("Z"), Number: proto.Int32(0)}}}},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"),
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("m"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
					Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".m.M.MEntry")},
				{Name: proto.String("e"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_ENUM.Enum(), TypeName: proto.String(".m.E")},
			},
			NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("MEntry"), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: proto.String("key"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum()},
					{Name: proto.String("value"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()},
				}}},
		}},
	}}}
	lines := []string{"format: PROTO", "file_descriptor_path: " + writeSet(t, set), "message_name: M"}
	src := build(t, "type: ReadFromKafka\nconfig:\n"+config("t", lines...)).Component.(*source)
	enc := build(t, "type: WriteToKafka\nconfig:\n"+config("t", lines...), src.out).Component.(*sink).format.NewEncoder()
	if _, _, err := enc([]byte{}, src.out, schemas.Row{map[string]any{"5000000000": "x"}, "Z"}); err == nil || !strings.Contains(err.Error(), `key "5000000000": 5000000000 does not fit int32`) {
		t.Errorf("an int32 key out of range: %v", err)
	}
	b, _, err := enc([]byte{}, src.out, schemas.Row{map[string]any{"-3": "x"}, "7"})
	if err != nil {
		t.Fatal(err)
	}
	row, err := src.format.NewDecoder()(b)
	if err != nil || fmt.Sprint(row) != "[map[-3:x] 7]" {
		t.Errorf("read back %v, %v; want [map[-3:x] 7]", row, err)
	}
}
