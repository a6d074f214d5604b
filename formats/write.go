package formats

import (
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/avro"
	"github.com/twmb/franz-go/pkg/sr"
)

// Writing is how a sink writes the values of a format.
type Writing struct {
	// NewEncoder returns an encoder for one lane.
	NewEncoder func() Encoder
	// Wire, when set, writes the values in the Confluent wire format: Wire.Header heads each.
	Wire *Wire
	// registered is the values' schema as a schema registry holds it (AVRO and JSON).
	registered sr.Schema
}

// WriteOptions is what the sink knows that the format keys do not say.
type WriteOptions struct {
	// Topic names the default subject of the registry, <topic>-value.
	Topic string
	// RegistryAuth is the registry's user:password from the connector's properties (a secret).
	RegistryAuth string
	// LookupOnly only looks the values' schema up in the registry instead of registering it
	// (the Confluent serializers' auto.register.schemas=false).
	LookupOnly bool
}

// Write checks the format keys for writing values of format (RAW, JSON, AVRO, PROTO) from
// the context's inputs, reporting problems at their position, and returns how to write them.
func (c *Config) Write(ctx *component.Context, format string, opt WriteOptions) (Writing, bool) {
	ok := protoKeysFit(ctx, format)
	w, fok := c.writing(ctx, format, opt)
	if fok && c.UsesRegistry() {
		w.Wire, fok = c.wire(ctx, format, opt, w.registered)
	}
	return w, ok && fok
}

func (c *Config) writing(ctx *component.Context, format string, opt WriteOptions) (Writing, bool) {
	if format != "AVRO" && c.Schema != nil {
		ctx.Errorf(ctx.KeyPos("schema"), "%s: schema is only used with format AVRO; format %s writes the input's fields", ctx.Describe(), format)
		return Writing{}, false
	}
	switch format {
	case "RAW":
		ok := true
		for _, in := range ctx.Inputs {
			s := in.Schema
			if s != nil && (len(s.Fields) != 1 || (s.Fields[0].Type.Kind != schemas.Bytes && s.Fields[0].Type.Kind != schemas.String)) {
				ctx.Errorf(ctx.Pos, "%s with format RAW writes one bytes or string field per record, but its input %q has rows %s", ctx.Describe(), in.Name, s).
					Detail = "map the rows to a single field first, e.g. MapToFields with fields: {payload: ...}"
				ok = false
			}
		}
		return Writing{NewEncoder: func() Encoder { return encodeRaw }}, ok
	case "JSON":
		w := Writing{NewEncoder: func() Encoder {
			return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
				return schemas.AppendJSON(dst, s, row), false, nil
			}
		}}
		if in := ctx.Input(); in != nil {
			text, err := json.Marshal(jsonSchemaFor(in.Fields))
			if err != nil {
				ctx.Errorf(ctx.KeyPos("format"), "%s: the JSON Schema of the input: %v", ctx.Describe(), err)
				return Writing{}, false
			}
			w.registered = sr.Schema{Schema: string(text), Type: sr.TypeJSON}
		}
		return w, true
	case "PROTO":
		return c.protoWriting(ctx)
	}
	return c.avroWriting(ctx)
}

func encodeRaw(dst []byte, _ *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
	if len(row) != 1 {
		return dst, false, fmt.Errorf("format RAW writes rows of one field, not %d", len(row))
	}
	switch v := row[0].(type) {
	case []byte:
		return append(dst, v...), false, nil
	case string:
		return append(dst, v...), false, nil
	case nil:
		return dst, true, nil
	}
	return dst, false, fmt.Errorf("format RAW writes bytes or strings, not a %s value", schemas.KindOf(row[0]))
}

// avroWriting encodes rows with the Avro schema of the config, or one derived from the
// input, matching the record's fields to the rows' by name.
func (c *Config) avroWriting(ctx *component.Context) (Writing, bool) {
	var codec *avro.Codec
	var text string
	if c.Schema != nil {
		if codec = avroCodecOf(ctx, c.Schema, "AVRO"); codec == nil {
			return Writing{}, false
		}
		text, _ = avroText(c.Schema) // it compiled
		ok := true
		for _, in := range ctx.Inputs {
			if in.Schema == nil {
				continue
			}
			if err := FieldsFit(in.Schema.Fields, codec.Schema().Fields, avroTarget); err != nil {
				ctx.Errorf(ctx.KeyPos("schema"), "%s: the Avro schema does not fit input %q: %v", ctx.Describe(), in.Name, err)
				ok = false
			}
		}
		if !ok {
			return Writing{}, false
		}
	} else {
		in := ctx.Input()
		if in == nil {
			ctx.Errorf(ctx.KeyPos("format"), "%s: format AVRO needs a schema when the input's is not known", ctx.Describe())
			return Writing{}, false
		}
		var err error
		text, err = avro.SchemaFor(in)
		if err == nil {
			codec, err = avro.NewCodec(text)
		}
		if err != nil {
			ctx.Errorf(ctx.KeyPos("format"), "%s: cannot derive an Avro schema from the input: %v", ctx.Describe(), err).
				Detail = "give the Avro schema to write as schema"
			return Writing{}, false
		}
	}
	record := codec.Schema().Fields
	return Writing{registered: sr.Schema{Schema: text, Type: sr.TypeAvro}, NewEncoder: func() Encoder {
		enc := codec.NewEncoder()
		fieldsOf := map[*schemas.Schema][]int{} // per row schema: Avro field -> row index
		return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
			fields, ok := fieldsOf[s]
			if !ok {
				fields = make([]int, len(record))
				for i, f := range record {
					fields[i] = -1
					if j, ok := s.Index(f.Name); ok {
						fields[i] = j
					}
				}
				fieldsOf[s] = fields
			}
			out, err := enc.Append(dst, row, fields)
			return out, false, err
		}
	}}, true
}
