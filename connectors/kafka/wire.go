package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/sr"
	"gopkg.in/yaml.v3"
)

// Reading and writing values in the Confluent wire format, with a schema registry.

const (
	registryURLKey     = "confluent_schema_registry_url"
	registrySubjectKey = "confluent_schema_registry_subject"
)

// registryOf returns the client of the registry that config key confluent_schema_registry_url
// names (with ${env:NAME} and ${file:PATH} expanded), reporting problems at its position without credentials.
func registryOf(ctx *component.Context, rawURL string, set *settings) *schemaRegistry {
	value, _, err := expandRefs(rawURL)
	var reg *schemaRegistry
	if err == nil {
		reg, err = newSchemaRegistry(value, set.registryAuth)
	}
	if err != nil {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: %s: %v", ctx.Describe(), registryURLKey, err)
		return nil
	}
	return reg
}

// wireReadFormat is ReadFromKafka's format for values in the Confluent wire format: AVRO values
// are decoded with the writer's schema (fetched by id) into rows of the reader's schema (the
// config's schema, else the latest of the subject); JSON values are decoded with the reader's
// JSON Schema once their id is known to the registry.
func wireReadFormat(ctx *component.Context, cfg *ReadConfig, set *settings, topics []string) (readFormat, bool) {
	if cfg.ConfluentSchemaRegistryURL == "" {
		ctx.Errorf(ctx.KeyPos(registrySubjectKey), "%s: %s needs %s", ctx.Describe(), registrySubjectKey, registryURLKey)
		return readFormat{}, false
	}
	if cfg.Format != "AVRO" && cfg.Format != "JSON" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: values in the Confluent wire format are read with format AVRO or JSON, not %s", ctx.Describe(), cfg.Format)
		return readFormat{}, false
	}
	reg := registryOf(ctx, cfg.ConfluentSchemaRegistryURL, set)
	if reg == nil {
		return readFormat{}, false
	}
	schemaNode := cfg.Schema
	if schemaNode == nil && ctx.Offline { // the registry is asked when the pipeline runs
		subject, ok := readSubject(ctx, cfg, topics)
		return readFormat{from: fmt.Sprintf("subject %q of the schema registry at %s", subject, reg.shown)}, ok
	}
	if schemaNode == nil {
		if schemaNode = latestSchema(ctx, cfg, reg, topics); schemaNode == nil {
			return readFormat{}, false
		}
	}
	cache := &wireSchemas{reg: reg}
	if cfg.Format == "JSON" {
		schema := jsonSchemaOf(ctx, schemaNode)
		if schema == nil {
			return readFormat{}, false
		}
		cache.compile = func(id int, s sr.Schema) (*avroType, error) {
			if s.Type != sr.TypeJSON {
				return nil, fmt.Errorf("schema id %d is a %s schema, not a JSON Schema (format is JSON)", id, s.Type)
			}
			return nil, nil
		}
		return readFormat{schema: schema, reg: reg, newDecoder: func() valueDecoder {
			dec := schemas.NewJSONDecoder(schema)
			return func(v []byte) (schemas.Row, error) {
				_, body, err := cache.value(v)
				if err != nil {
					return nil, err
				}
				return dec.Decode(body)
			}
		}}, true
	}
	codec := avroCodecOf(ctx, schemaNode, "AVRO")
	if codec == nil {
		return readFormat{}, false
	}
	cache.compile = func(id int, s sr.Schema) (*avroType, error) { return codec.writerRoot(id, s) }
	return readFormat{schema: codec.schema, reg: reg, newDecoder: func() valueDecoder {
		dec := codec.newDecoder()
		return func(v []byte) (schemas.Row, error) {
			root, body, err := cache.value(v)
			if err != nil {
				return nil, err
			}
			return dec.decodeAs(root, body)
		}
	}}, true
}

// latestSchema fetches the latest schema of the subject (confluent_schema_registry_subject,
// else <topic>-value), for a ReadFromKafka without a schema, as a node that the format's
// schema parser reads.
func latestSchema(ctx *component.Context, cfg *ReadConfig, reg *schemaRegistry, topics []string) *yaml.Node {
	subject, ok := readSubject(ctx, cfg, topics)
	if !ok {
		return nil
	}
	bctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	ss, err := reg.latest(bctx, subject)
	reg.close()
	pos := ctx.KeyPos(registryURLKey)
	switch {
	case notFound(err):
		ctx.Errorf(pos, "%s: subject %q has no schema in the schema registry at %s, and no schema is given", ctx.Describe(), subject, reg.shown).
			Detail = "register the values' schema under the subject, name another with " + registrySubjectKey + ", or give the reader's schema as schema"
		return nil
	case err != nil:
		ctx.Errorf(pos, "%s: no schema is given, and the latest schema of subject %q could not be read: %v", ctx.Describe(), subject, err).
			Detail = "the registry must be reachable when the pipeline starts (and for sluice validate --check-services); or give the reader's schema as schema"
		return nil
	}
	want := sr.TypeAvro
	if cfg.Format == "JSON" {
		want = sr.TypeJSON
	}
	switch {
	case ss.Type != want:
		ctx.Errorf(pos, "%s: the latest schema of subject %q (id %d) is a %s schema, which format %s cannot read", ctx.Describe(), subject, ss.ID, ss.Type, cfg.Format)
		return nil
	case len(ss.References) > 0:
		ctx.Errorf(pos, "%s: the latest schema of subject %q (id %d) references other schemas, which sluice does not read", ctx.Describe(), subject, ss.ID)
		return nil
	}
	// JSON text is YAML: the schema parsers take it as a scalar or a mapping alike.
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ss.Schema.Schema}
}

// readSubject returns the subject whose latest schema is the reader's when the config gives
// none: confluent_schema_registry_subject, else <topic>-value of the one topic.
func readSubject(ctx *component.Context, cfg *ReadConfig, topics []string) (string, bool) {
	if cfg.ConfluentSchemaRegistrySubject != "" {
		return cfg.ConfluentSchemaRegistrySubject, true
	}
	if len(topics) != 1 {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: without a schema, the reader's schema is the latest of a subject of the registry, and with several topics %s must say which", ctx.Describe(), registrySubjectKey)
		return "", false
	}
	return subjectFor(topics[0]), true
}

// wireSchemas caches, per schema id, how to read the values written with that schema; lanes
// share it.
type wireSchemas struct {
	reg     *schemaRegistry
	compile func(id int, s sr.Schema) (*avroType, error)
	byID    sync.Map   // int -> wireEntry
	mu      sync.Mutex // serializes fetches
}

// wireEntry is how to read the values of one schema id, or why they cannot be read.
type wireEntry struct {
	root *avroType
	err  error
}

// value splits a value in the wire format and returns how to read it with its encoded bytes.
// An unknown id or a writer's schema that cannot be read is an error of the record; a registry
// that cannot be reached is errRegistryUnavailable, which stops the pipeline.
func (w *wireSchemas) value(v []byte) (*avroType, []byte, error) {
	if v == nil {
		return nil, nil, errNoValue
	}
	id, body, err := splitWire(v)
	if err != nil {
		return nil, nil, err
	}
	e, ok := w.byID.Load(id)
	if !ok {
		e, err = w.fetch(id)
		if err != nil {
			return nil, nil, err
		}
	}
	entry := e.(wireEntry)
	return entry.root, body, entry.err
}

func (w *wireSchemas) fetch(id int) (any, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.byID.Load(id); ok {
		return e, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*registryTimeout)
	defer cancel()
	s, err := w.reg.byID(ctx, id)
	var entry wireEntry
	switch {
	case errors.Is(err, errRegistryUnavailable):
		return nil, err // not remembered: the next record asks again
	case notFound(err):
		entry.err = fmt.Errorf("schema id %d is not in the schema registry at %s", id, w.reg.shown)
	case err != nil:
		entry.err = err
	case len(s.References) > 0:
		entry.err = fmt.Errorf("schema id %d references other schemas, which sluice does not read", id)
	default:
		entry.root, entry.err = w.compile(id, s)
	}
	w.byID.Store(id, entry)
	return entry, nil
}

// writerRoot returns the record type that reads values written with the registry's schema s
// (id) into rows of the codec's schema: the codec's own when s is the same schema, else the
// writer's schema resolved to the codec's.
func (c *avroCodec) writerRoot(id int, s sr.Schema) (*avroType, error) {
	if s.Type != sr.TypeAvro {
		return nil, fmt.Errorf("schema id %d is a %s schema, not Avro (format is AVRO)", id, s.Type)
	}
	parsed, err := avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("schema id %d: avro schema: %w", id, err)
	}
	if parsed.Fingerprint() == c.fingerprint {
		return c.root, nil
	}
	if _, ok := parsed.(*avro.RecordSchema); !ok {
		return nil, fmt.Errorf("schema id %d is an Avro %s, not a record", id, parsed.Type())
	}
	w, err := compileAvro(parsed, "")
	if err == nil {
		var root *avroType
		if root, err = resolveAvro(w, c.root); err == nil {
			return root, nil
		}
	}
	return nil, fmt.Errorf("the writer's schema (id %d) cannot be read with the reader's schema: %w", id, err)
}

// wireWriter is WriteToKafka's side of the wire format: the schema it registers (or looks up)
// under its subject when the sink opens, whose id heads every value.
type wireWriter struct {
	reg        *schemaRegistry
	subject    string
	schema     sr.Schema
	lookupOnly bool
}

// wireWriterOf returns the wire format writer of a WriteToKafka with a schema registry.
func wireWriterOf(ctx *component.Context, cfg *WriteConfig, set *settings, schema sr.Schema) (*wireWriter, bool) {
	if cfg.ConfluentSchemaRegistryURL == "" {
		ctx.Errorf(ctx.KeyPos(registrySubjectKey), "%s: %s needs %s", ctx.Describe(), registrySubjectKey, registryURLKey)
		return nil, false
	}
	if cfg.Format != "AVRO" && cfg.Format != "JSON" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: values in the Confluent wire format are written with format AVRO or JSON, not %s", ctx.Describe(), cfg.Format)
		return nil, false
	}
	if schema.Schema == "" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: the Confluent wire format needs the values' schema, and the input's is not known", ctx.Describe())
		return nil, false
	}
	reg := registryOf(ctx, cfg.ConfluentSchemaRegistryURL, set)
	if reg == nil {
		return nil, false
	}
	subject := cfg.ConfluentSchemaRegistrySubject
	if subject == "" {
		subject = subjectFor(cfg.Topic)
	}
	return &wireWriter{reg: reg, subject: subject, schema: schema, lookupOnly: set.lookupOnly}, true
}

// header registers the schema (or looks it up) and returns the header of the values.
func (w *wireWriter) header(ctx context.Context) ([]byte, error) {
	defer w.reg.close()
	id, err := w.reg.register(ctx, w.subject, w.schema, w.lookupOnly)
	if err != nil {
		return nil, err
	}
	return wireHeader(id), nil
}

// jsonSchemaFor returns the JSON Schema of rows with the given fields, as the JSON encoder
// writes them and ParseJSONSchema reads them back (properties in the fields' order): nullable
// fields are not required and may be null.
func jsonSchemaFor(fields []schemas.Field) jsonObject {
	props := make(jsonObject, 0, len(fields))
	required := []string{}
	for _, f := range fields {
		t := jsonTypeFor(f.Type)
		if f.Nullable && len(t) > 0 && t[0].key == "type" {
			t[0].value = []any{t[0].value, "null"}
		}
		if !f.Nullable {
			required = append(required, f.Name)
		}
		props = append(props, jsonMember{f.Name, t})
	}
	return jsonObject{{"type", "object"}, {"properties", props}, {"required", required}}
}

func jsonTypeFor(t schemas.Type) jsonObject {
	switch t.Kind {
	case schemas.Bool:
		return jsonObject{{"type", "boolean"}}
	case schemas.Int64:
		return jsonObject{{"type", "integer"}}
	case schemas.Float64, schemas.Decimal:
		return jsonObject{{"type", "number"}}
	case schemas.String:
		return jsonObject{{"type", "string"}}
	case schemas.Bytes:
		return jsonObject{{"type", "string"}, {"contentEncoding", "base64"}}
	case schemas.Timestamp:
		return jsonObject{{"type", "string"}, {"format", "date-time"}}
	case schemas.Date:
		return jsonObject{{"type", "string"}, {"format", "date"}}
	case schemas.Array:
		out := jsonObject{{"type", "array"}}
		if t.Elem != nil && t.Elem.Kind != schemas.Any {
			out = append(out, jsonMember{"items", jsonTypeFor(*t.Elem)})
		}
		return out
	case schemas.Map:
		out := jsonObject{{"type", "object"}}
		if t.Elem != nil && t.Elem.Kind != schemas.Any {
			out = append(out, jsonMember{"additionalProperties", jsonTypeFor(*t.Elem)})
		}
		return out
	case schemas.Struct:
		return jsonSchemaFor(t.Fields)
	}
	return jsonObject{}
}

// jsonObject is a JSON object that keeps its members' order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			out = append(out, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}'), nil
}
