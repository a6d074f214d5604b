package formats

import (
	"errors"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/protobuf"
)

// Format PROTO, as Beam reads it: the values are Protocol Buffers messages of message_name,
// described by the FileDescriptorSet in file_descriptor_path (what `protoc --include_imports
// --descriptor_set_out=FILE` writes). The codec is schemas/protobuf's; this file turns the
// keys into it and reports problems at their positions. Fields map onto rows as
// docs/kafka.md says.

// protoMessage loads the message of format PROTO, reporting problems at their keys; ok false
// says that the caller found a problem already, so the keys are checked but nothing is loaded.
func (c *Config) protoMessage(ctx *component.Context, ok bool) (protoreflect.MessageDescriptor, *schemas.Schema, bool) {
	if c.FileDescriptorPath == "" {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format PROTO needs file_descriptor_path: a FileDescriptorSet, as `protoc --include_imports --descriptor_set_out=FILE` writes", ctx.Describe())
		ok = false
	}
	if c.MessageName == "" {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format PROTO needs message_name: the message the values hold", ctx.Describe())
		ok = false
	}
	if !ok {
		return nil, nil, false
	}
	md, err := protobuf.Load(c.FileDescriptorPath, c.MessageName)
	if err != nil {
		key := "file_descriptor_path"
		if errors.Is(err, protobuf.ErrNoMessage) {
			key = "message_name"
		}
		ctx.Errorf(ctx.KeyPos(key), "%s: %v", ctx.Describe(), err)
		return nil, nil, false
	}
	s, err := protobuf.Schema(md)
	if err != nil {
		ctx.Errorf(ctx.KeyPos("message_name"), "%s: message %s: %v", ctx.Describe(), md.FullName(), err)
		return nil, nil, false
	}
	return md, s, true
}

// protoReading decodes each value as a message of message_name.
func (c *Config) protoReading(ctx *component.Context) (Reading, bool) {
	schemaOK := c.Schema == nil
	if !schemaOK {
		ctx.Errorf(ctx.KeyPos("schema"), "%s: with format PROTO the schema is the message's, from file_descriptor_path; a .proto text is not read (compile it with protoc --descriptor_set_out)", ctx.Describe())
	}
	md, s, ok := c.protoMessage(ctx, schemaOK)
	if !ok {
		return Reading{}, false
	}
	return Reading{Schema: s, NewDecoder: func() Decoder {
		dec := protobuf.NewDecoder(md)
		return func(v []byte) (schemas.Row, error) {
			if v == nil {
				return nil, ErrNoValue
			}
			return dec.Decode(v)
		}
	}}, true
}

// protoWriting writes each row as a message of message_name: a row field sets the message
// field of its name, a null or missing one leaves it unset. The inputs are checked against
// the message at build time, at message_name.
func (c *Config) protoWriting(ctx *component.Context) (Writing, bool) {
	md, msg, ok := c.protoMessage(ctx, true)
	if !ok {
		return Writing{}, false
	}
	name := "message " + string(md.FullName())
	target := FitTarget{Record: name, Schema: name, AbsentOK: true}
	for _, in := range ctx.Inputs {
		if in.Schema == nil {
			continue
		}
		err := FieldsFit(in.Schema.Fields, msg.Fields, target)
		if err == nil {
			_, err = protobuf.NewEncoder(md, in.Schema, protobuf.Options{})
		}
		if err != nil {
			ctx.Errorf(ctx.KeyPos("message_name"), "%s: %s does not fit input %q: %v", ctx.Describe(), name, in.Name, err)
			ok = false
		}
	}
	return Writing{NewEncoder: func() Encoder {
		encoders := map[*schemas.Schema]*protobuf.Encoder{} // per row schema, made at its first row
		return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
			enc, known := encoders[s]
			if !known {
				var err error
				if enc, err = protobuf.NewEncoder(md, s, protobuf.Options{}); err != nil {
					return dst, false, err
				}
				encoders[s] = enc
			}
			out, err := enc.Append(dst, row)
			return out, false, err
		}
	}}, ok
}
