package formats

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/avro"
	"github.com/sluicehq/sluice/schemas/confluent"
	"gopkg.in/yaml.v3"
)

// Reading is how a source reads the values of a format: the rows' schema and a decoder per
// goroutine.
type Reading struct {
	Schema *schemas.Schema
	// NewDecoder returns a decoder for one goroutine.
	NewDecoder func() Decoder
	// Registry is the schema registry the decoders ask, for values in the Confluent wire
	// format; the source closes it (Close) when it closes.
	Registry *confluent.Registry
	// From names the service that alone knows Schema, when the pipeline is checked offline and
	// Schema is nil (component.Context.OutputFromService).
	From string
	// Current, set when the reading follows its registry subject (ReadOptions.Follow), returns
	// the rows' schema as it is now: Schema with the fields newer writers' schemas added at its
	// end. A decoder's rows are as wide as the schema was when their writer's schema was first
	// seen: never wider than Current afterwards, perhaps narrower.
	Current func() *schemas.Schema
}

// Close drops the idle connections of the reading's registry client, if any.
func (r *Reading) Close() {
	if r.Registry != nil {
		r.Registry.Close()
	}
}

// ReadOptions is what the source knows that the format keys do not say.
type ReadOptions struct {
	// Topics are the topics read; with a registry and no schema, the subject of the one topic
	// (<topic>-value) holds the reader's schema.
	Topics []string
	// RegistryAuth is the registry's user:password from the connector's properties (a secret).
	RegistryAuth string
	// Follow makes AVRO values in the Confluent wire format read with a reader's schema that
	// gains the fields newer writers' schemas add (Reading.Current); the source checks that
	// the format is that one.
	Follow bool
}

// The row schemas of RAW and STRING, as in Beam.
var (
	rawSchema    = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})
	stringSchema = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.String}})
)

// Read checks the format keys for reading values of format (RAW, STRING, JSON, AVRO, PROTO),
// reporting problems at their position, and returns how to read them. With a schema registry
// and no schema it asks the registry for the reader's schema, unless the pipeline is checked
// offline.
func (c *Config) Read(ctx *component.Context, format string, opt ReadOptions) (Reading, bool) {
	if c.UsesRegistry() {
		return c.wireRead(ctx, format, opt)
	}
	if !protoKeysFit(ctx, format) {
		return Reading{}, false
	}
	switch format {
	case "RAW", "STRING":
		if c.Schema != nil {
			ctx.Errorf(ctx.KeyPos("schema"), "%s: format %s takes no schema: its rows are {payload: %s}", ctx.Describe(), format,
				map[string]string{"RAW": "bytes", "STRING": "string"}[format])
			return Reading{}, false
		}
		if format == "RAW" {
			return Reading{Schema: rawSchema, NewDecoder: func() Decoder {
				return func(v []byte) (schemas.Row, error) { return schemas.Row{append([]byte{}, v...)}, nil }
			}}, true
		}
		return Reading{Schema: stringSchema, NewDecoder: func() Decoder {
			return func(v []byte) (schemas.Row, error) { return schemas.Row{string(v)}, nil }
		}}, true
	case "JSON":
		schema := jsonSchemaOf(ctx, c.Schema)
		if schema == nil {
			return Reading{}, false
		}
		return Reading{Schema: schema, NewDecoder: func() Decoder {
			dec := schemas.NewJSONDecoder(schema)
			return func(v []byte) (schemas.Row, error) {
				if v == nil {
					return nil, ErrNoValue
				}
				return dec.Decode(v)
			}
		}}, true
	case "PROTO":
		return c.protoReading(ctx)
	}
	codec := avroCodecOf(ctx, c.Schema, "AVRO (the default format)")
	if codec == nil {
		return Reading{}, false
	}
	return Reading{Schema: codec.Schema(), NewDecoder: func() Decoder {
		dec := codec.NewDecoder()
		return func(v []byte) (schemas.Row, error) {
			if v == nil {
				return nil, ErrNoValue
			}
			return dec.Decode(v)
		}
	}}, true
}

// jsonSchemaOf parses the JSON Schema of format JSON, reporting problems at their position.
func jsonSchemaOf(ctx *component.Context, n *yaml.Node) *schemas.Schema {
	if n == nil {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format JSON needs a schema: the JSON Schema of the records", ctx.Describe())
		return nil
	}
	return JSONSchema(ctx, n)
}

// JSONSchema parses the JSON Schema of config key schema (a mapping, or JSON text), reporting
// problems at their position in the file.
func JSONSchema(ctx *component.Context, n *yaml.Node) *schemas.Schema {
	s, err := schemas.ParseJSONSchema(n)
	if err != nil {
		pos := ctx.KeyPos("schema")
		if se, ok := errors.AsType[*schemas.SchemaError](err); ok && se.Line > 0 {
			pos.Line, pos.Col = se.Line, se.Column
		}
		ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
		return nil
	}
	return s
}

// avroCodecOf compiles the Avro schema of config key schema (JSON text, or the same as a
// mapping), reporting problems at its position; format names the format for a missing schema.
func avroCodecOf(ctx *component.Context, n *yaml.Node, format string) *avro.Codec {
	if n == nil {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format %s needs a schema: the Avro schema of the values", ctx.Describe(), format)
		return nil
	}
	text, err := avroText(n)
	if err == nil {
		var c *avro.Codec
		if c, err = avro.NewCodec(text); err == nil {
			return c
		}
	}
	ctx.Errorf(ctx.KeyPos("schema"), "%s: %v", ctx.Describe(), err)
	return nil
}

// avroText returns the Avro schema of n as JSON text.
func avroText(n *yaml.Node) (string, error) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return "", fmt.Errorf("avro schema: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("avro schema: %w", err)
	}
	return string(b), nil
}
