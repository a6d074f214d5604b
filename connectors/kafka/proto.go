package kafka

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Format PROTO, as Beam reads it: the values are Protocol Buffers messages of message_name,
// described by the FileDescriptorSet in file_descriptor_path (what `protoc --include_imports
// --descriptor_set_out=FILE` writes). Fields map onto rows as docs/kafka.md says: every
// integer to integer, float and double to number, enums to the value's name, messages to
// structs (google.protobuf.Timestamp to timestamp, the wrapper types to their nullable
// value), repeated fields to arrays and maps to maps. A field is nullable when the message
// can tell it is absent (messages, optional and oneof fields); others read as their default.

// protoCodec is the compiled message of format PROTO.
type protoCodec struct {
	md     protoreflect.MessageDescriptor
	schema *schemas.Schema
}

// protoCodecOf loads the message of format PROTO from the config's file_descriptor_path and
// message_name, reporting problems at their keys.
func protoCodecOf(ctx *component.Context, descriptorPath, messageName string, schema *yaml.Node) *protoCodec {
	ok := true
	if descriptorPath == "" {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format PROTO needs file_descriptor_path: a FileDescriptorSet, as `protoc --include_imports --descriptor_set_out=FILE` writes", ctx.Describe())
		ok = false
	}
	if messageName == "" {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format PROTO needs message_name: the message the values hold", ctx.Describe())
		ok = false
	}
	if schema != nil {
		ctx.Errorf(ctx.KeyPos("schema"), "%s: with format PROTO the schema is the message's, from file_descriptor_path; a .proto text is not read (compile it with protoc --descriptor_set_out)", ctx.Describe())
		ok = false
	}
	if !ok {
		return nil
	}
	md, err := loadProtoMessage(descriptorPath, messageName)
	if err != nil {
		key := "file_descriptor_path"
		if errors.Is(err, errNoMessage) {
			key = "message_name"
		}
		ctx.Errorf(ctx.KeyPos(key), "%s: %v", ctx.Describe(), err)
		return nil
	}
	fields, err := protoFields(md, nil)
	if err != nil {
		ctx.Errorf(ctx.KeyPos("message_name"), "%s: message %s: %v", ctx.Describe(), md.FullName(), err)
		return nil
	}
	return &protoCodec{md: md, schema: schemas.New(fields...)}
}

var errNoMessage = errors.New("no such message")

// loadProtoMessage finds the message name (full, or a unique short name) in the
// FileDescriptorSet at path.
func loadProtoMessage(path, name string) (protoreflect.MessageDescriptor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("file_descriptor_path: %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("file_descriptor_path %s is not a FileDescriptorSet (protoc --descriptor_set_out): %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("file_descriptor_path %s: %w (did protoc run with --include_imports?)", path, err)
	}
	var all, matches []protoreflect.MessageDescriptor
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		collectMessages(fd.Messages(), &all)
		return true
	})
	for _, md := range all {
		if string(md.FullName()) == name {
			return md, nil
		}
		if string(md.Name()) == name {
			matches = append(matches, md)
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	var names []string // the file's own, without google.protobuf's well-known types
	for _, md := range all {
		if md.ParentFile().Package() != "google.protobuf" {
			names = append(names, string(md.FullName()))
		}
	}
	slices.Sort(names)
	if len(matches) > 1 {
		return nil, fmt.Errorf("%w: message_name %q names %d messages; give the full name (%s)", errNoMessage, name, len(matches), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%w: %s has no message %q (it has %s)", errNoMessage, path, name, strings.Join(names, ", "))
}

func collectMessages(ms protoreflect.MessageDescriptors, out *[]protoreflect.MessageDescriptor) {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		*out = append(*out, md)
		collectMessages(md.Messages(), out)
	}
}

// protoFields returns the row fields of md. seen holds the messages being mapped, so that a
// recursive message is an error rather than a loop.
func protoFields(md protoreflect.MessageDescriptor, seen []protoreflect.FullName) ([]schemas.Field, error) {
	if slices.Contains(seen, md.FullName()) {
		return nil, fmt.Errorf("message %s contains itself, which rows cannot", md.FullName())
	}
	seen = append(seen, md.FullName())
	fds := md.Fields()
	out := make([]schemas.Field, 0, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		t, nullable, err := protoType(fd, seen)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fd.Name(), err)
		}
		out = append(out, schemas.Field{Name: string(fd.Name()), Type: t, Nullable: nullable})
	}
	return out, nil
}

// protoType is the row type of field fd, and whether the field can be null.
func protoType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (schemas.Type, bool, error) {
	if fd.IsMap() {
		v, _, err := protoType(fd.MapValue(), seen)
		return schemas.Type{Kind: schemas.Map, Elem: &v}, false, err
	}
	t, err := protoScalarType(fd, seen)
	if fd.IsList() {
		return schemas.Type{Kind: schemas.Array, Elem: &t}, false, err
	}
	return t, fd.HasPresence(), err
}

func protoScalarType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (schemas.Type, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return schemas.Type{Kind: schemas.Bool}, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return schemas.Type{Kind: schemas.Int64}, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return schemas.Type{Kind: schemas.Float64}, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return schemas.Type{Kind: schemas.String}, nil
	case protoreflect.BytesKind:
		return schemas.Type{Kind: schemas.Bytes}, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		if md.FullName() == timestampName {
			return schemas.Type{Kind: schemas.Timestamp}, nil
		}
		if w := wrapped(md); w != nil {
			return protoScalarType(w, seen)
		}
		fields, err := protoFields(md, seen)
		return schemas.Type{Kind: schemas.Struct, Fields: fields}, err
	}
	return schemas.Type{}, fmt.Errorf("type %s is not supported", fd.Kind())
}

const timestampName protoreflect.FullName = "google.protobuf.Timestamp"

// wrapped returns the value field of a well-known wrapper message (google.protobuf.Int64Value
// and the others), or nil.
func wrapped(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if md.ParentFile().Package() != "google.protobuf" || !strings.HasSuffix(string(md.Name()), "Value") || md.Fields().Len() != 1 {
		return nil
	}
	if f := md.Fields().Get(0); f.Name() == "value" && f.Kind() != protoreflect.MessageKind && !f.IsList() {
		return f
	}
	return nil
}

// newDecoder returns a decoder of the codec's messages into rows, for one goroutine.
func (c *protoCodec) newDecoder() valueDecoder {
	msg := dynamicpb.NewMessage(c.md)
	return func(v []byte) (schemas.Row, error) {
		if v == nil {
			return nil, errNoValue
		}
		msg.Reset()
		if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(v, msg); err != nil {
			return nil, fmt.Errorf("not a %s message: %w", c.md.FullName(), err)
		}
		return protoRow(msg)
	}
}

// protoRow returns the fields of m as a row, in the order of its descriptor.
func protoRow(m protoreflect.Message) (schemas.Row, error) {
	fds := m.Descriptor().Fields()
	row := make(schemas.Row, fds.Len())
	for i := range fds.Len() {
		v, err := protoFieldValue(m, fds.Get(i))
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// protoFieldValue is the row value of field fd of m: nil when the field can be absent and is.
func protoFieldValue(m protoreflect.Message, fd protoreflect.FieldDescriptor) (any, error) {
	switch {
	case fd.IsMap():
		out := map[string]any{}
		var err error
		m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var val any
			if val, err = protoValue(fd.MapValue(), v); err == nil {
				out[k.String()] = val
			}
			return err == nil
		})
		return out, fieldErr(fd, err)
	case fd.IsList():
		l := m.Get(fd).List()
		out := make([]any, l.Len())
		for i := range l.Len() {
			v, err := protoValue(fd, l.Get(i))
			if err != nil {
				return nil, fieldErr(fd, err)
			}
			out[i] = v
		}
		return out, nil
	case fd.HasPresence() && !m.Has(fd):
		return nil, nil
	}
	v, err := protoValue(fd, m.Get(fd))
	return v, fieldErr(fd, err)
}

func fieldErr(fd protoreflect.FieldDescriptor, err error) error {
	if err != nil {
		return fmt.Errorf("field %s: %w", fd.Name(), err)
	}
	return nil
}

// protoValue is the row value of one value v of field fd (an element, for a repeated field).
func protoValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool(), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		u := v.Uint()
		if u > math.MaxInt64 {
			return nil, fmt.Errorf("%d does not fit an integer (int64)", u)
		}
		return int64(u), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return v.Float(), nil
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BytesKind:
		return slices.Clone(v.Bytes()), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return strconv.Itoa(int(v.Enum())), nil // a value this descriptor does not know
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m := v.Message()
		md := m.Descriptor()
		if md.FullName() == timestampName {
			f := md.Fields()
			return time.Unix(m.Get(f.ByName("seconds")).Int(), m.Get(f.ByName("nanos")).Int()).UTC(), nil
		}
		if w := wrapped(md); w != nil {
			return protoValue(w, m.Get(w))
		}
		row, err := protoRow(m)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(row))
		fds := md.Fields()
		for i, val := range row {
			out[string(fds.Get(i).Name())] = val
		}
		return out, nil
	}
	return nil, fmt.Errorf("type %s is not supported", fd.Kind())
}
