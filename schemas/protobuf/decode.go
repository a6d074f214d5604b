package protobuf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluicehq/sluice/schemas"
)

// Decoder reads messages of one type into rows of its Schema. It is for one goroutine.
type Decoder struct {
	md  protoreflect.MessageDescriptor
	msg *dynamicpb.Message
}

// NewDecoder returns a decoder of md's messages.
func NewDecoder(md protoreflect.MessageDescriptor) *Decoder {
	return &Decoder{md: md, msg: dynamicpb.NewMessage(md)}
}

// Decode returns the row of the message in b; the row shares nothing with b.
func (d *Decoder) Decode(b []byte) (schemas.Row, error) {
	if err := d.unmarshal(b); err != nil {
		return nil, fmt.Errorf("not a %s message: %w", d.md.FullName(), err)
	}
	return messageRow(d.msg)
}

// unmarshal reads b into d.msg. protobuf-go's Unmarshal panics on some malformed map entries
// of dynamic messages ("type mismatch: cannot convert nil to map key", found by FuzzDecode):
// that is a bad record, not a reason to stop the process.
func (d *Decoder) unmarshal(b []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed message: %v", p)
		}
	}()
	d.msg.Reset()
	return proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}.Unmarshal(b, d.msg)
}

// messageRow returns the fields of m as a row, in the order of its descriptor.
func messageRow(m protoreflect.Message) (schemas.Row, error) {
	fds := m.Descriptor().Fields()
	row := make(schemas.Row, fds.Len())
	for i := range fds.Len() {
		v, err := fieldValue(m, fds.Get(i))
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// fieldValue is the row value of field fd of m: nil when the field can be absent and is.
func fieldValue(m protoreflect.Message, fd protoreflect.FieldDescriptor) (any, error) {
	switch {
	case fd.IsMap():
		out := map[string]any{}
		var err error
		m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var val any
			if val, err = rowValue(fd.MapValue(), v); err == nil {
				out[k.String()] = val
			}
			return err == nil
		})
		return out, fieldErr(fd, err)
	case fd.IsList():
		l := m.Get(fd).List()
		out := make([]any, l.Len())
		for i := range l.Len() {
			v, err := rowValue(fd, l.Get(i))
			if err != nil {
				return nil, fieldErr(fd, err)
			}
			out[i] = v
		}
		return out, nil
	case fd.HasPresence() && !m.Has(fd):
		return nil, nil
	}
	v, err := rowValue(fd, m.Get(fd))
	return v, fieldErr(fd, err)
}

func fieldErr(fd protoreflect.FieldDescriptor, err error) error {
	if err != nil {
		return fmt.Errorf("field %s: %w", fd.Name(), err)
	}
	return nil
}

// rowValue is the row value of one value v of field fd (an element, for a repeated field).
func rowValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
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
			return rowValue(w, m.Get(w))
		}
		row, err := messageRow(m)
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
