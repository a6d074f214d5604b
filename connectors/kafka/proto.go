package kafka

import (
	"errors"

	"google.golang.org/protobuf/reflect/protoreflect"
	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/protobuf"
)

// Format PROTO, as Beam reads it: the values are Protocol Buffers messages of message_name,
// described by the FileDescriptorSet in file_descriptor_path (what `protoc --include_imports
// --descriptor_set_out=FILE` writes). The codec is schemas/protobuf's; this file turns the
// config into it and reports problems at their keys. Fields map onto rows as docs/kafka.md
// says.

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
	md, err := protobuf.Load(descriptorPath, messageName)
	if err != nil {
		key := "file_descriptor_path"
		if errors.Is(err, protobuf.ErrNoMessage) {
			key = "message_name"
		}
		ctx.Errorf(ctx.KeyPos(key), "%s: %v", ctx.Describe(), err)
		return nil
	}
	s, err := protobuf.Schema(md)
	if err != nil {
		ctx.Errorf(ctx.KeyPos("message_name"), "%s: message %s: %v", ctx.Describe(), md.FullName(), err)
		return nil
	}
	return &protoCodec{md: md, schema: s}
}

// newDecoder returns a decoder of the codec's messages into rows, for one goroutine.
func (c *protoCodec) newDecoder() valueDecoder {
	dec := protobuf.NewDecoder(c.md)
	return func(v []byte) (schemas.Row, error) {
		if v == nil {
			return nil, errNoValue
		}
		return dec.Decode(v)
	}
}
