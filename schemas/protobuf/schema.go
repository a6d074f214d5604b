package protobuf

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/sluicehq/sluice/schemas"
)

// Messages map onto rows as docs/kafka.md says: every integer to integer, float and double to
// number, enums to the value's name, messages to structs (google.protobuf.Timestamp to
// timestamp, the wrapper types to their nullable value), repeated fields to arrays and maps to
// maps. A field is nullable when the message can tell it is absent (messages, optional and
// oneof fields); others read as their default.

// ErrNoMessage is Load's error when the set has no message of the name, or several.
var ErrNoMessage = errors.New("no such message")

// Load finds the message name (full, or a unique short name) in the FileDescriptorSet at path,
// as `protoc --include_imports --descriptor_set_out=FILE` writes it.
func Load(path, name string) (protoreflect.MessageDescriptor, error) {
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
		return nil, fmt.Errorf("%w: message_name %q names %d messages; give the full name (%s)", ErrNoMessage, name, len(matches), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%w: %s has no message %q (it has %s)", ErrNoMessage, path, name, strings.Join(names, ", "))
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

// Schema returns the row schema of md's messages.
func Schema(md protoreflect.MessageDescriptor) (*schemas.Schema, error) {
	fields, err := rowFields(md, nil)
	if err != nil {
		return nil, err
	}
	return schemas.New(fields...), nil
}

// rowFields returns the row fields of md. seen holds the messages being mapped, so that a
// recursive message is an error rather than a loop.
func rowFields(md protoreflect.MessageDescriptor, seen []protoreflect.FullName) ([]schemas.Field, error) {
	if slices.Contains(seen, md.FullName()) {
		return nil, fmt.Errorf("message %s contains itself, which rows cannot", md.FullName())
	}
	seen = append(seen, md.FullName())
	fds := md.Fields()
	out := make([]schemas.Field, 0, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		t, nullable, err := rowType(fd, seen)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fd.Name(), err)
		}
		out = append(out, schemas.Field{Name: string(fd.Name()), Type: t, Nullable: nullable})
	}
	return out, nil
}

// rowType is the row type of field fd, and whether the field can be null.
func rowType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (schemas.Type, bool, error) {
	if fd.IsMap() {
		v, _, err := rowType(fd.MapValue(), seen)
		return schemas.Type{Kind: schemas.Map, Elem: &v}, false, err
	}
	t, err := scalarType(fd, seen)
	if fd.IsList() {
		return schemas.Type{Kind: schemas.Array, Elem: &t}, false, err
	}
	return t, fd.HasPresence(), err
}

func scalarType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (schemas.Type, error) {
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
			return scalarType(w, seen)
		}
		fields, err := rowFields(md, seen)
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
