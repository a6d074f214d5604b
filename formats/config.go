package formats

import (
	"errors"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Config is the block of format keys a connector's config embeds (with yaml:",inline"). The
// format key itself stays the connector's: which formats it takes, its default and whether it
// is required differ between connectors and directions, and the config's tags say so to
// `sluice schema`.
type Config struct {
	Schema *yaml.Node `yaml:"schema" doc:"The values' schema, as JSON text or a mapping. Reading: with JSON a JSON Schema of the records, with AVRO the Avro schema of the values (a record); not allowed with RAW, STRING and PROTO. Writing: AVRO only, the Avro record schema to write, its fields matched to the rows' by name (default: one derived from the input's fields)."`

	FileDescriptorPath string `yaml:"file_descriptor_path" doc:"PROTO: a FileDescriptorSet file holding message_name and what it imports, as protoc --include_imports --descriptor_set_out=FILE writes it."`
	MessageName        string `yaml:"message_name" doc:"PROTO: the message the values hold, by its full name (package.Message) or a name no other message of the file has; written rows' fields set its fields of the same names."`

	ConfluentSchemaRegistryURL     string `yaml:"confluent_schema_registry_url" doc:"The values are in the Confluent wire format (magic byte 0, 4-byte schema id), format AVRO or JSON: read with the writer's schema from this schema registry, or written with their schema registered under the subject (sluice adds writing). Credentials as https://user:password@host or with basic.auth.user.info; ${env:NAME} is read from the environment."`
	ConfluentSchemaRegistrySubject string `yaml:"confluent_schema_registry_subject" doc:"Reading without schema: the reader's schema is the latest version of this subject of the registry. Writing: the subject to register the values' schema under. Default <topic>-value (Confluent's TopicNameStrategy)."`
}

// Decoder turns one encoded value into a row. One goroutine uses it at a time.
type Decoder func(value []byte) (schemas.Row, error)

// Encoder appends the encoded value of row, aligned with s, to dst. null is set for a value
// that is null (a tombstone). One goroutine uses it at a time.
type Encoder func(dst []byte, s *schemas.Schema, row schemas.Row) (out []byte, null bool, err error)

// ErrNoValue is the error of a record without a value (a tombstone) in a format that needs one.
var ErrNoValue = errors.New("the record has no value (a tombstone)")

// Registry keys, for messages and positions.
const (
	registryURLKey     = "confluent_schema_registry_url"
	registrySubjectKey = "confluent_schema_registry_subject"
)

// UsesRegistry reports whether the values are in the Confluent wire format.
func (c *Config) UsesRegistry() bool {
	return c.ConfluentSchemaRegistryURL != "" || c.ConfluentSchemaRegistrySubject != ""
}

// protoKeysFit reports (at their keys) file_descriptor_path and message_name given for a
// format other than PROTO.
func protoKeysFit(ctx *component.Context, format string) bool {
	if format == "PROTO" {
		return true
	}
	ok := true
	for _, key := range []string{"file_descriptor_path", "message_name"} {
		if component.MappingValue(ctx.Config, key) != nil {
			ctx.Errorf(ctx.KeyPos(key), "%s: %s is for format PROTO, and the format is %s", ctx.Describe(), key, format)
			ok = false
		}
	}
	return ok
}
