package formats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/avro"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/twmb/franz-go/pkg/sr"
	"gopkg.in/yaml.v3"
)

// Reading and writing values in the Confluent wire format, with a schema registry.

// registryOf returns the client of the registry that config key confluent_schema_registry_url
// names (with ${env:NAME} and ${file:PATH} expanded), reporting problems at its position
// without credentials.
func (c *Config) registryOf(ctx *component.Context, auth string) *confluent.Registry {
	value, _, err := secret.Expand(c.ConfluentSchemaRegistryURL)
	var reg *confluent.Registry
	if err == nil {
		reg, err = confluent.NewRegistry(value, auth)
	}
	if err != nil {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: %s: %v", ctx.Describe(), registryURLKey, err)
		return nil
	}
	return reg
}

// wireRead is the format of values in the Confluent wire format: AVRO values are decoded
// with the writer's schema (fetched by id) into rows of the reader's schema (the config's
// schema, else the latest of the subject); JSON values are decoded with the reader's JSON
// Schema once their id is known to the registry.
func (c *Config) wireRead(ctx *component.Context, format string, opt ReadOptions) (Reading, bool) {
	if c.ConfluentSchemaRegistryURL == "" {
		ctx.Errorf(ctx.KeyPos(registrySubjectKey), "%s: %s needs %s", ctx.Describe(), registrySubjectKey, registryURLKey)
		return Reading{}, false
	}
	if format != "AVRO" && format != "JSON" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: values in the Confluent wire format are read with format AVRO or JSON, not %s", ctx.Describe(), format)
		return Reading{}, false
	}
	reg := c.registryOf(ctx, opt.RegistryAuth)
	if reg == nil {
		return Reading{}, false
	}
	schemaNode := c.Schema
	if schemaNode == nil && ctx.Offline { // the registry is asked when the pipeline runs
		subject, ok := c.readSubject(ctx, opt.Topics)
		return Reading{From: fmt.Sprintf("subject %q of the schema registry at %s", subject, reg.URL())}, ok
	}
	if schemaNode == nil {
		if schemaNode = c.latestSchema(ctx, format, reg, opt.Topics); schemaNode == nil {
			return Reading{}, false
		}
	}
	cache := &wireSchemas{reg: reg}
	if format == "JSON" {
		schema := jsonSchemaOf(ctx, schemaNode)
		if schema == nil {
			return Reading{}, false
		}
		cache.compile = func(id int, s sr.Schema) (*avro.Writer, error) {
			if s.Type != sr.TypeJSON {
				return nil, fmt.Errorf("schema id %d is a %s schema, not a JSON Schema (format is JSON)", id, s.Type)
			}
			return nil, nil
		}
		return Reading{Schema: schema, Registry: reg, NewDecoder: func() Decoder {
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
		return Reading{}, false
	}
	resolve := codec.Resolve
	var current func() *schemas.Schema
	if opt.Follow {
		text, err := avroText(schemaNode) // read once by avroCodecOf already
		if err != nil {
			ctx.Errorf(ctx.KeyPos("schema"), "%s: %v", ctx.Describe(), err)
			return Reading{}, false
		}
		f := newFollower(text, codec)
		resolve, current = f.resolve, f.current
	}
	cache.compile = func(id int, s sr.Schema) (*avro.Writer, error) {
		if s.Type != sr.TypeAvro {
			return nil, fmt.Errorf("schema id %d is a %s schema, not Avro (format is AVRO)", id, s.Type)
		}
		return resolve(id, s.Schema)
	}
	return Reading{Schema: codec.Schema(), Registry: reg, Current: current, NewDecoder: func() Decoder {
		dec := codec.NewDecoder()
		return func(v []byte) (schemas.Row, error) {
			w, body, err := cache.value(v)
			if err != nil {
				return nil, err
			}
			return dec.DecodeWritten(w, body)
		}
	}}, true
}

// latestSchema fetches the latest schema of the subject (confluent_schema_registry_subject,
// else <topic>-value), for a reader without a schema, as a node that the format's schema
// parser reads.
func (c *Config) latestSchema(ctx *component.Context, format string, reg *confluent.Registry, topics []string) *yaml.Node {
	subject, ok := c.readSubject(ctx, topics)
	if !ok {
		return nil
	}
	bctx, cancel := context.WithTimeout(context.Background(), confluent.Timeout)
	defer cancel()
	ss, err := reg.Latest(bctx, subject)
	reg.Close()
	pos := ctx.KeyPos(registryURLKey)
	switch {
	case confluent.NotFound(err):
		ctx.Errorf(pos, "%s: subject %q has no schema in the schema registry at %s, and no schema is given", ctx.Describe(), subject, reg.URL()).
			Detail = "register the values' schema under the subject, name another with " + registrySubjectKey + ", or give the reader's schema as schema"
		return nil
	case err != nil:
		ctx.Errorf(pos, "%s: no schema is given, and the latest schema of subject %q could not be read: %v", ctx.Describe(), subject, err).
			Detail = "the registry must be reachable when the pipeline starts (and for sluice validate --check-services); or give the reader's schema as schema"
		return nil
	}
	want := sr.TypeAvro
	if format == "JSON" {
		want = sr.TypeJSON
	}
	switch {
	case ss.Type != want:
		ctx.Errorf(pos, "%s: the latest schema of subject %q (id %d) is a %s schema, which format %s cannot read", ctx.Describe(), subject, ss.ID, ss.Type, format)
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
func (c *Config) readSubject(ctx *component.Context, topics []string) (string, bool) {
	if c.ConfluentSchemaRegistrySubject != "" {
		return c.ConfluentSchemaRegistrySubject, true
	}
	if len(topics) != 1 {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: without a schema, the reader's schema is the latest of a subject of the registry, and with several topics %s must say which", ctx.Describe(), registrySubjectKey)
		return "", false
	}
	return confluent.SubjectFor(topics[0]), true
}

// wireSchemas caches, per schema id, how to read the values written with that schema;
// decoders share it.
type wireSchemas struct {
	reg     *confluent.Registry
	compile func(id int, s sr.Schema) (*avro.Writer, error)
	byID    sync.Map   // int -> wireEntry
	mu      sync.Mutex // serializes fetches
}

// wireEntry is how to read the values of one schema id, or why they cannot be read.
type wireEntry struct {
	writer *avro.Writer
	err    error
}

// value splits a value in the wire format and returns how to read it with its encoded bytes.
// An unknown id or a writer's schema that cannot be read is an error of the record; a registry
// that cannot be reached is confluent.ErrUnavailable, which stops the pipeline.
func (w *wireSchemas) value(v []byte) (*avro.Writer, []byte, error) {
	if v == nil {
		return nil, nil, ErrNoValue
	}
	id, body, err := confluent.Split(v)
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
	return entry.writer, body, entry.err
}

func (w *wireSchemas) fetch(id int) (any, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.byID.Load(id); ok {
		return e, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*confluent.Timeout)
	defer cancel()
	s, err := w.reg.ByID(ctx, id)
	var entry wireEntry
	switch {
	case errors.Is(err, confluent.ErrUnavailable):
		return nil, err // not remembered: the next record asks again
	case confluent.NotFound(err):
		entry.err = fmt.Errorf("schema id %d is not in the schema registry at %s", id, w.reg.URL())
	case err != nil:
		entry.err = err
	case len(s.References) > 0:
		entry.err = fmt.Errorf("schema id %d references other schemas, which sluice does not read", id)
	default:
		entry.writer, entry.err = w.compile(id, s)
	}
	w.byID.Store(id, entry)
	return entry, nil
}

// Wire is a sink's side of the wire format: the schema it registers (or looks up) under its
// subject when the sink opens, whose id heads every value.
type Wire struct {
	reg        *confluent.Registry
	subject    string
	schema     sr.Schema
	lookupOnly bool
}

// wire returns the wire format writer of a sink with a schema registry.
func (c *Config) wire(ctx *component.Context, format string, opt WriteOptions, schema sr.Schema) (*Wire, bool) {
	if c.ConfluentSchemaRegistryURL == "" {
		ctx.Errorf(ctx.KeyPos(registrySubjectKey), "%s: %s needs %s", ctx.Describe(), registrySubjectKey, registryURLKey)
		return nil, false
	}
	if format != "AVRO" && format != "JSON" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: values in the Confluent wire format are written with format AVRO or JSON, not %s", ctx.Describe(), format)
		return nil, false
	}
	if schema.Schema == "" {
		ctx.Errorf(ctx.KeyPos(registryURLKey), "%s: the Confluent wire format needs the values' schema, and the input's is not known", ctx.Describe())
		return nil, false
	}
	reg := c.registryOf(ctx, opt.RegistryAuth)
	if reg == nil {
		return nil, false
	}
	subject := c.ConfluentSchemaRegistrySubject
	if subject == "" {
		subject = confluent.SubjectFor(opt.Topic)
	}
	return &Wire{reg: reg, subject: subject, schema: schema, lookupOnly: opt.LookupOnly}, true
}

// Header registers the schema (or looks it up) and returns the header of the values.
func (w *Wire) Header(ctx context.Context) ([]byte, error) {
	defer w.reg.Close()
	id, err := w.reg.Register(ctx, w.subject, w.schema, w.lookupOnly)
	if err != nil {
		return nil, err
	}
	return confluent.Header(id), nil
}
