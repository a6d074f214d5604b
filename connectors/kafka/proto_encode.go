package kafka

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/protobuf"
)

// protoWriteFormat writes each row as a message of message_name with schemas/protobuf's
// encoder: a row field sets the message field of its name (docs/kafka.md has the types), a
// null or missing one leaves it unset. The inputs are checked against the message at build
// time, at message_name.
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
		err := fieldsFit(in.Schema.Fields, codec.schema.Fields, "", target)
		if err == nil {
			_, err = protobuf.NewEncoder(codec.md, in.Schema, protobuf.Options{})
		}
		if err != nil {
			ctx.Errorf(ctx.KeyPos("message_name"), "%s: %s does not fit input %q: %v", ctx.Describe(), name, in.Name, err)
			ok = false
		}
	}
	return writeFormat{newEncoder: func() rowEncoder {
		encoders := map[*schemas.Schema]*protobuf.Encoder{} // per row schema, made at its first row
		return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
			enc, known := encoders[s]
			if !known {
				var err error
				if enc, err = protobuf.NewEncoder(codec.md, s, protobuf.Options{}); err != nil {
					return dst, false, err
				}
				encoders[s] = enc
			}
			out, err := enc.Append(dst, row)
			return out, false, err
		}
	}}, ok
}
