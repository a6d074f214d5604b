package kafka

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// valueDecoder turns one record value into a row. One goroutine uses it at a time.
type valueDecoder func(value []byte) (schemas.Row, error)

// readFormat is what distinguishes the formats of ReadFromKafka: the rows' schema and how a
// value becomes a row.
type readFormat struct {
	schema *schemas.Schema
	// newDecoder returns a decoder for one goroutine.
	newDecoder func() valueDecoder
	// reg is the schema registry the decoders ask, for values in the Confluent wire format.
	reg *schemaRegistry
	// from names the service that alone knows schema, when the pipeline is checked offline
	// and schema is nil (component.Context.OutputFromService).
	from string
}

// The row schemas of RAW and STRING, as in Beam.
var (
	rawSchema    = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})
	stringSchema = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.String}})
)

// errNoValue is the error of a record without a value (a tombstone) in a format that needs one.
var errNoValue = errors.New("the record has no value (a tombstone)")

func buildRead(ctx *component.Context, cfg *ReadConfig) (component.Source, error) {
	ok := true
	var topics []string
	var pattern *regexp.Regexp
	switch {
	case cfg.TopicPattern != "" && len(cfg.Topic) > 0:
		ctx.Errorf(ctx.KeyPos("topic_pattern"), "%s: give topic or topic_pattern, not both", ctx.Describe())
		ok = false
	case cfg.TopicPattern != "":
		var err error
		if pattern, err = regexp.Compile("^(?:" + cfg.TopicPattern + ")$"); err != nil {
			ctx.Errorf(ctx.KeyPos("topic_pattern"), "%s: topic_pattern is not a regular expression: %v", ctx.Describe(), err)
			ok = false
		}
	default:
		if topics = uniqueTopics(ctx, cfg.Topic); topics == nil {
			ok = false
		}
	}
	set := newSettings()
	set.batchFetches = ctx.Options.Delivery != component.AtLeastOnce
	if set.bootstrap = parseBootstrap(cfg.BootstrapServers); len(set.bootstrap) == 0 {
		ctx.Errorf(ctx.KeyPos("bootstrap_servers"), "%s needs bootstrap_servers: host:port pairs separated by commas, or embedded", ctx.Describe())
		ok = false
	}
	ok = applyProperties(ctx, "consumer_config", cfg.ConsumerConfig, consumerSide, set) && ok
	ok = applyProperties(ctx, "consumer_config_updates", cfg.ConsumerConfigUpdates, consumerSide, set) && ok
	ok = ok && finishSecurity(ctx, "consumer_config", set)
	if cfg.AutoOffsetResetConfig != "" {
		set.reset = cfg.AutoOffsetResetConfig
	} else if set.reset == "" {
		set.reset = "latest"
	}
	if cfg.MaxNumRecords < 0 {
		ctx.Errorf(ctx.KeyPos("max_num_records"), "%s: max_num_records must not be negative", ctx.Describe())
		ok = false
	}
	var format readFormat
	fok := false
	switch {
	case cfg.ConfluentSchemaRegistryURL == "" && cfg.ConfluentSchemaRegistrySubject == "":
		format, fok = readFormatOf(ctx, cfg)
	case ok: // it may ask the registry, with the properties' credentials
		format, fok = wireReadFormat(ctx, cfg, set, topics)
	}
	if !ok || !fok {
		return nil, nil
	}
	out := format.schema
	if out == nil && format.from != "" {
		ctx.OutputFromService(component.Main, format.from)
	} else if cfg.WithMetadata {
		if out = withMetadata(ctx, out); out == nil {
			return nil, nil
		}
	}
	if out != nil {
		ctx.Output(component.Main, out)
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOShape)
	s := newSource(ctx.Describe(), topics, set, format, errOut)
	s.pattern, s.patternSrc = pattern, cfg.TopicPattern
	s.out, s.metadata = out, cfg.WithMetadata
	s.maxRecords, s.maxTime = cfg.MaxNumRecords, time.Duration(cfg.MaxReadTimeSeconds)
	return s, nil
}

// uniqueTopics returns the topics without repeats, or nil (reported) when one is empty.
func uniqueTopics(ctx *component.Context, topics []string) []string {
	var out []string
	for _, t := range topics {
		t = strings.TrimSpace(t)
		if t == "" {
			ctx.Errorf(ctx.KeyPos("topic"), "%s: a topic name must not be empty", ctx.Describe())
			return nil
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		ctx.Errorf(ctx.KeyPos("topic"), "%s needs a topic (or a topic_pattern)", ctx.Describe())
	}
	return out
}

func readFormatOf(ctx *component.Context, cfg *ReadConfig) (readFormat, bool) {
	if cfg.Format != "PROTO" {
		for _, key := range []string{"file_descriptor_path", "message_name"} {
			if component.MappingValue(ctx.Config, key) != nil {
				ctx.Errorf(ctx.KeyPos(key), "%s: %s is for format PROTO, and the format is %s", ctx.Describe(), key, cfg.Format)
				return readFormat{}, false
			}
		}
	}
	switch cfg.Format {
	case "RAW", "STRING":
		if cfg.Schema != nil {
			ctx.Errorf(ctx.KeyPos("schema"), "%s: format %s takes no schema: its rows are {payload: %s}", ctx.Describe(), cfg.Format,
				map[string]string{"RAW": "bytes", "STRING": "string"}[cfg.Format])
			return readFormat{}, false
		}
		if cfg.Format == "RAW" {
			return readFormat{schema: rawSchema, newDecoder: func() valueDecoder {
				return func(v []byte) (schemas.Row, error) { return schemas.Row{append([]byte{}, v...)}, nil }
			}}, true
		}
		return readFormat{schema: stringSchema, newDecoder: func() valueDecoder {
			return func(v []byte) (schemas.Row, error) { return schemas.Row{string(v)}, nil }
		}}, true
	case "JSON":
		schema := jsonSchemaOf(ctx, cfg.Schema)
		if schema == nil {
			return readFormat{}, false
		}
		return readFormat{schema: schema, newDecoder: func() valueDecoder {
			dec := schemas.NewJSONDecoder(schema)
			return func(v []byte) (schemas.Row, error) {
				if v == nil {
					return nil, errNoValue
				}
				return dec.Decode(v)
			}
		}}, true
	case "PROTO":
		codec := protoCodecOf(ctx, cfg.FileDescriptorPath, cfg.MessageName, cfg.Schema)
		if codec == nil {
			return readFormat{}, false
		}
		return readFormat{schema: codec.schema, newDecoder: codec.newDecoder}, true
	}
	codec := avroCodecOf(ctx, cfg.Schema, "AVRO (the default format)")
	if codec == nil {
		return readFormat{}, false
	}
	return readFormat{schema: codec.schema, newDecoder: func() valueDecoder {
		dec := codec.newDecoder()
		return func(v []byte) (schemas.Row, error) {
			if v == nil {
				return nil, errNoValue
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
func avroCodecOf(ctx *component.Context, n *yaml.Node, format string) *avroCodec {
	if n == nil {
		ctx.Errorf(ctx.KeyPos("format"), "%s: format %s needs a schema: the Avro schema of the values", ctx.Describe(), format)
		return nil
	}
	text, err := avroText(n)
	if err == nil {
		var c *avroCodec
		if c, err = newAvroCodec(text); err == nil {
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
