package protobuf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The default conversions of row values into scalar fields (docs/kafka.md's table, read
// backwards): an integer into any integer kind it fits, a number or an integer into float and
// double, a string into string, bytes or a string into bytes, and an enum's value name (or its
// number, as a string or an integer) into an enum.

var errNotBool = errors.New("is not true or false")

// scalarPut returns the default writer of row values into fd, of a scalar kind.
func scalarPut(fd protoreflect.FieldDescriptor) (Put, error) {
	k := fd.Kind()
	bad := func(v any, want string) error { return &KindError{What: k.String(), Want: want, Value: v} }
	switch k {
	case protoreflect.BoolKind:
		return func(dst []byte, v any) ([]byte, error) {
			b, ok := v.(bool)
			if !ok {
				return dst, bad(v, "a boolean")
			}
			return protowire.AppendVarint(dst, protowire.EncodeBool(b)), nil
		}, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return func(dst []byte, v any) ([]byte, error) {
			n, ok := v.(int64)
			if !ok {
				return dst, bad(v, "an integer")
			}
			return appendInt(dst, k, n)
		}, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return func(dst []byte, v any) ([]byte, error) {
			var f float64
			switch x := v.(type) {
			case float64:
				f = x
			case int64:
				f = float64(x)
			default:
				return dst, bad(v, "a number")
			}
			if k == protoreflect.FloatKind {
				return protowire.AppendFixed32(dst, math.Float32bits(float32(f))), nil
			}
			return protowire.AppendFixed64(dst, math.Float64bits(f)), nil
		}, nil
	case protoreflect.StringKind:
		checkUTF8 := fd.ParentFile().Syntax() == protoreflect.Proto3 // as proto3 parsers check it
		return func(dst []byte, v any) ([]byte, error) {
			s, ok := v.(string)
			if !ok {
				return dst, bad(v, "a string")
			}
			if checkUTF8 && !utf8.ValidString(s) {
				return dst, fmt.Errorf("the string %w", ErrInvalidUTF8)
			}
			return protowire.AppendString(dst, s), nil
		}, nil
	case protoreflect.BytesKind:
		return func(dst []byte, v any) ([]byte, error) {
			switch x := v.(type) {
			case []byte:
				return protowire.AppendBytes(dst, x), nil
			case string:
				return protowire.AppendString(dst, x), nil
			}
			return dst, bad(v, "bytes")
		}, nil
	case protoreflect.EnumKind:
		return func(dst []byte, v any) ([]byte, error) {
			n, err := enumNumber(fd, v)
			if err != nil {
				return dst, err
			}
			return protowire.AppendVarint(dst, uint64(int64(n))), nil
		}, nil
	}
	return nil, fmt.Errorf("type %s is not supported", k)
}

// enumNumber is the number of the enum value v names.
func enumNumber(fd protoreflect.FieldDescriptor, v any) (protoreflect.EnumNumber, error) {
	switch x := v.(type) {
	case string:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(x)); ev != nil {
			return ev.Number(), nil
		}
		if n, err := strconv.ParseInt(x, 10, 32); err == nil { // a number the descriptor does not name, as read
			return protoreflect.EnumNumber(n), nil
		}
		return 0, fmt.Errorf("enum %s has no value %q", fd.Enum().FullName(), x)
	case int64:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("enum number %d is out of range", x)
		}
		return protoreflect.EnumNumber(x), nil
	}
	return 0, &KindError{What: fd.Kind().String(), Want: "a value name", Value: v}
}

// appendInt appends n as a value of integer kind k, if it fits.
func appendInt(dst []byte, k protoreflect.Kind, n int64) ([]byte, error) {
	switch k {
	case protoreflect.Int64Kind:
		return protowire.AppendVarint(dst, uint64(n)), nil
	case protoreflect.Sint64Kind:
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(n)), nil
	case protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(dst, uint64(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n >= 0 {
			if k == protoreflect.Fixed64Kind {
				return protowire.AppendFixed64(dst, uint64(n)), nil
			}
			return protowire.AppendVarint(dst, uint64(n)), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n >= 0 && n <= math.MaxUint32 {
			if k == protoreflect.Fixed32Kind {
				return protowire.AppendFixed32(dst, uint32(n)), nil
			}
			return protowire.AppendVarint(dst, uint64(n)), nil
		}
	default: // the 32-bit signed kinds
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			switch k {
			case protoreflect.Sint32Kind:
				return protowire.AppendVarint(dst, protowire.EncodeZigZag(n)), nil
			case protoreflect.Sfixed32Kind:
				return protowire.AppendFixed32(dst, uint32(int32(n))), nil
			}
			return protowire.AppendVarint(dst, uint64(n)), nil // int32: negatives sign-extended, as protobuf does
		}
	}
	return dst, fmt.Errorf("%d does not fit %s", n, k)
}
