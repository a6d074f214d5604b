package kafka

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
)

// The seam between formats and format PROTO, which proto.go and proto_encode.go still build
// here: formats.Config calls readProto and writeProto through ReadOptions.Proto and
// WriteOptions.Proto, and the names below are the ones those files use. When PROTO moves to
// schemas/protobuf (issue 16), formats builds it itself and this file goes.

type (
	valueDecoder = formats.Decoder
	rowEncoder   = formats.Encoder
)

var errNoValue = formats.ErrNoValue

// readFormat is formats.Reading with newDecoder, as the source and proto_test.go call it.
type readFormat struct {
	formats.Reading
	newDecoder func() valueDecoder
}

// writeFormat is formats.Writing in the shape protoWriteFormat builds and the sink and
// proto_test.go use.
type writeFormat struct {
	newEncoder func() rowEncoder
	wire       *formats.Wire
}

// fitTarget is formats.FitTarget for protoWriteFormat.
type fitTarget struct {
	record, schema string
	absentOK       bool
}

func fieldsFit(in, out []schemas.Field, _ string, t fitTarget) error {
	return formats.FieldsFit(in, out, formats.FitTarget{Record: t.record, Schema: t.schema, AbsentOK: t.absentOK})
}

// goKind names the kind of a row value, for "not a string value".
func goKind(v any) string { return schemas.KindOf(v).String() }

// readProto builds ReadFromKafka's format PROTO.
func readProto(ctx *component.Context, cfg *ReadConfig) func() (formats.Reading, bool) {
	return func() (formats.Reading, bool) {
		codec := protoCodecOf(ctx, cfg.FileDescriptorPath, cfg.MessageName, cfg.Schema)
		if codec == nil {
			return formats.Reading{}, false
		}
		return formats.Reading{Schema: codec.schema, NewDecoder: codec.newDecoder}, true
	}
}

// writeProto builds WriteToKafka's format PROTO.
func writeProto(ctx *component.Context, cfg *WriteConfig) func() (formats.Writing, bool) {
	return func() (formats.Writing, bool) {
		f, ok := protoWriteFormat(ctx, cfg)
		return formats.Writing{NewEncoder: f.newEncoder}, ok
	}
}
