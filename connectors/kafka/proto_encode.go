package kafka

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// protoWriteFormat writes each row as a message of message_name: a row field sets the message
// field of its name (docs/kafka.md has the types), a null or missing one leaves it unset.
func protoWriteFormat(ctx *component.Context, cfg *WriteConfig) (writeFormat, bool) {
	codec := protoCodecOf(ctx, cfg.FileDescriptorPath, cfg.MessageName, nil)
	if codec == nil {
		return writeFormat{}, false
	}
	name := "message " + string(codec.md.FullName())
	target := fitTarget{record: name, schema: name, absentOK: true}
	ok := true
	for _, in := range ctx.Inputs {
		if in.Schema == nil {
			continue
		}
		if err := fieldsFit(in.Schema.Fields, codec.schema.Fields, "", target); err != nil {
			ctx.Errorf(ctx.KeyPos("message_name"), "%s: %s does not fit input %q: %v", ctx.Describe(), name, in.Name, err)
			ok = false
		}
	}
	return writeFormat{newEncoder: func() rowEncoder {
		msg := dynamicpb.NewMessage(codec.md)
		fieldsOf := map[*schemas.Schema][]protoreflect.FieldDescriptor{} // per row schema: row index -> message field
		return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
			fds, known := fieldsOf[s]
			if !known {
				fds = make([]protoreflect.FieldDescriptor, len(s.Fields))
				for i, f := range s.Fields {
					fds[i] = codec.md.Fields().ByName(protoreflect.Name(f.Name))
				}
				fieldsOf[s] = fds
			}
			msg.Reset()
			for i, v := range row {
				if i < len(fds) && fds[i] != nil {
					if err := setProtoField(msg, fds[i], v); err != nil {
						return dst, false, err
					}
				}
			}
			out, err := proto.MarshalOptions{}.MarshalAppend(dst, msg)
			return out, false, err
		}
	}}, ok
}

// setProtoField sets field fd of m to the row value v; nil leaves it unset.
func setProtoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any) error {
	if v == nil {
		return nil
	}
	switch {
	case fd.IsMap():
		entries, ok := v.(map[string]any)
		if !ok {
			return fieldErr(fd, fmt.Errorf("a map field takes a map, not a %s value", goKind(v)))
		}
		mp := m.Mutable(fd).Map()
		for k, x := range entries {
			key, err := protoMapKey(fd.MapKey(), k)
			if err == nil && x == nil {
				err = fmt.Errorf("key %q: a map value cannot be null", k)
			}
			var val protoreflect.Value
			if err == nil {
				val, err = protoValueOf(fd.MapValue(), x, mp.NewValue)
			}
			if err != nil {
				return fieldErr(fd, err)
			}
			mp.Set(key, val)
		}
	case fd.IsList():
		items, ok := v.([]any)
		if !ok {
			return fieldErr(fd, fmt.Errorf("a repeated field takes an array, not a %s value", goKind(v)))
		}
		l := m.Mutable(fd).List()
		for i, x := range items {
			if x == nil {
				return fieldErr(fd, fmt.Errorf("element %d: a repeated field cannot hold null", i))
			}
			val, err := protoValueOf(fd, x, l.NewElement)
			if err != nil {
				return fieldErr(fd, fmt.Errorf("element %d: %w", i, err))
			}
			l.Append(val)
		}
	default:
		val, err := protoValueOf(fd, v, func() protoreflect.Value { return m.NewField(fd) })
		if err != nil {
			return fieldErr(fd, err)
		}
		m.Set(fd, val)
	}
	return nil
}

// protoMapKey is the map key of kind fd for the row's key text k.
func protoMapKey(fd protoreflect.FieldDescriptor, k string) (protoreflect.MapKey, error) {
	if fd.Kind() == protoreflect.StringKind {
		return protoreflect.ValueOfString(k).MapKey(), nil
	}
	if fd.Kind() == protoreflect.BoolKind {
		b, err := strconv.ParseBool(k)
		return protoreflect.ValueOfBool(b).MapKey(), err
	}
	n, err := strconv.ParseInt(k, 10, 64)
	if err != nil {
		return protoreflect.MapKey{}, fmt.Errorf("key %q is not an integer", k)
	}
	v, err := protoValueOf(fd, n, nil)
	if err != nil {
		return protoreflect.MapKey{}, fmt.Errorf("key %q: %w", k, err)
	}
	return v.MapKey(), nil
}

// protoValueOf converts one row value (an element, for a repeated field) to a value of field
// fd; newMessage makes the message of a message field.
func protoValueOf(fd protoreflect.FieldDescriptor, v any, newMessage func() protoreflect.Value) (protoreflect.Value, error) {
	bad := func(want string) (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("%s takes %s, not a %s value", fd.Kind(), want, goKind(v))
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
		return bad("a boolean")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, ok := v.(int64)
		if !ok {
			return bad("an integer")
		}
		return protoInt(fd.Kind(), n)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return bad("a number")
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.StringKind:
		if s, ok := v.(string); ok {
			return protoreflect.ValueOfString(s), nil
		}
		return bad("a string")
	case protoreflect.BytesKind:
		switch x := v.(type) {
		case []byte:
			return protoreflect.ValueOfBytes(x), nil
		case string:
			return protoreflect.ValueOfBytes([]byte(x)), nil
		}
		return bad("bytes")
	case protoreflect.EnumKind:
		switch x := v.(type) {
		case string:
			if ev := fd.Enum().Values().ByName(protoreflect.Name(x)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
			if n, err := strconv.ParseInt(x, 10, 32); err == nil { // a number the descriptor does not name, as read
				return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
			}
			return protoreflect.Value{}, fmt.Errorf("enum %s has no value %q", fd.Enum().FullName(), x)
		case int64:
			if x < math.MinInt32 || x > math.MaxInt32 {
				return protoreflect.Value{}, fmt.Errorf("enum number %d is out of range", x)
			}
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(x)), nil
		}
		return bad("a value name")
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoMessageOf(fd, v, newMessage)
	}
	return protoreflect.Value{}, fmt.Errorf("type %s is not supported", fd.Kind())
}

// protoInt is n as a value of integer kind k, if it fits.
func protoInt(k protoreflect.Kind, n int64) (protoreflect.Value, error) {
	switch k {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n >= 0 {
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n >= 0 && n <= math.MaxUint32 {
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
	default: // the 32-bit signed kinds
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	}
	return protoreflect.Value{}, fmt.Errorf("%d does not fit %s", n, k)
}

// protoMessageOf makes the message of field fd from a row value: a struct's fields by name, a
// timestamp, or the value of a wrapper type.
func protoMessageOf(fd protoreflect.FieldDescriptor, v any, newMessage func() protoreflect.Value) (protoreflect.Value, error) {
	nv := newMessage()
	m := nv.Message()
	md := m.Descriptor()
	switch {
	case md.FullName() == timestampName:
		t, ok := v.(time.Time)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("google.protobuf.Timestamp takes a timestamp, not a %s value", goKind(v))
		}
		m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(t.Unix()))
		m.Set(md.Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(t.Nanosecond())))
	case wrapped(md) != nil:
		w := wrapped(md)
		val, err := protoValueOf(w, v, nil)
		if err != nil {
			return protoreflect.Value{}, err
		}
		m.Set(w, val)
	default:
		fields, ok := v.(map[string]any)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("message %s takes a struct, not a %s value", md.FullName(), goKind(v))
		}
		for name, x := range fields {
			f := md.Fields().ByName(protoreflect.Name(name))
			if f == nil {
				return protoreflect.Value{}, fmt.Errorf("message %s has no field %q", md.FullName(), name)
			}
			if err := setProtoField(m, f, x); err != nil {
				return protoreflect.Value{}, err
			}
		}
	}
	return nv, nil
}
