package formats_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
)

// The configs of two components that are nothing but a format block: what any connector
// embeds, without Kafka.
type readConfig struct {
	Format         string `yaml:"format" enum:"RAW,STRING,JSON,AVRO"`
	formats.Config `yaml:",inline"`
}

type writeConfig struct {
	Format         string `yaml:"format" required:"true" enum:"RAW,JSON,AVRO"`
	formats.Config `yaml:",inline"`
}

// built is what the test components' builds gave, for the test to use.
var built struct {
	reading formats.Reading
	writing formats.Writing
}

func init() {
	component.RegisterSource("FormatsTestRead", "reads nothing", func(ctx *component.Context, cfg *readConfig) (component.Source, error) {
		r, ok := cfg.Read(ctx, cfg.Format, formats.ReadOptions{Topics: []string{"t"}})
		if ok {
			built.reading = r
			ctx.Output(component.Main, r.Schema)
		}
		return nil, nil
	})
	component.RegisterSink("FormatsTestWrite", "writes nothing", func(ctx *component.Context, cfg *writeConfig) (component.Sink, error) {
		if w, ok := cfg.Write(ctx, cfg.Format, formats.WriteOptions{Topic: "t"}); ok {
			built.writing = w
		}
		return nil, nil
	})
}

// The block's keys are the embedding config's own: decoded with positions, unknown ones with
// a suggestion among all keys, its problems reported at the key they are about.
func TestConfigChecks(t *testing.T) {
	events := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}})
	for _, c := range []struct {
		name, src string
		want      string
	}{
		{"unknown key", "type: FormatsTestRead\nconfig: {format: JSON, schemaa: {}}",
			`p.yaml:2:24: unknown config key "schemaa" in FormatsTestRead (did you mean "schema"?)` +
				"\n\thint: known keys: confluent_schema_registry_subject, confluent_schema_registry_url, file_descriptor_path, format, message_name, schema"},
		{"raw takes no schema", "type: FormatsTestRead\nconfig: {format: RAW, schema: {type: object}}",
			"p.yaml:2:31: FormatsTestRead: format RAW takes no schema: its rows are {payload: bytes}"},
		{"proto keys", "type: FormatsTestRead\nconfig: {format: JSON, schema: {type: object}, message_name: M}",
			"p.yaml:2:62: FormatsTestRead: message_name is for format PROTO, and the format is JSON"},
		{"json needs a schema", "type: FormatsTestRead\nconfig: {format: JSON}",
			"p.yaml:2:18: FormatsTestRead: format JSON needs a schema: the JSON Schema of the records"},
		{"subject without registry", "type: FormatsTestRead\nconfig: {format: AVRO, confluent_schema_registry_subject: s}",
			"p.yaml:2:59: FormatsTestRead: confluent_schema_registry_subject needs confluent_schema_registry_url"},
		{"registry url", "type: FormatsTestWrite\nconfig: {format: JSON, confluent_schema_registry_url: 'ftp://u:secret@h'}",
			`p.yaml:2:55: FormatsTestWrite: confluent_schema_registry_url: "ftp://***@h" is not an http or https URL`},
		{"write schema", "type: FormatsTestWrite\nconfig: {format: JSON, schema: {type: object}}",
			"p.yaml:2:32: FormatsTestWrite: schema is only used with format AVRO; format JSON writes the input's fields"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := componenttest.Env{}.Build(t, "", c.src, events)
			if got := strings.Join(b.Diags, "\n"); got != c.want {
				t.Errorf("diagnostics\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// A block read and written: JSON rows by their JSON Schema, Avro rows by the schema derived
// from the input, which reads them back.
func TestConfigCodecs(t *testing.T) {
	b := componenttest.Env{}.Build(t, "", "type: FormatsTestRead\nconfig: {format: JSON, schema: {type: object, properties: {id: {type: integer}}}}")
	if b.Err() != nil || built.reading.Schema.String() != "{id integer?}" {
		t.Fatalf("JSON: %v, schema %v", b.Err(), built.reading.Schema)
	}
	row, err := built.reading.NewDecoder()([]byte(`{"id": 7}`))
	if err != nil || !reflect.DeepEqual(row, schemas.Row{int64(7)}) {
		t.Errorf("JSON decode: %v, %v", row, err)
	}
	if _, err := built.reading.NewDecoder()(nil); err != formats.ErrNoValue {
		t.Errorf("a tombstone: %v, want ErrNoValue", err)
	}

	events := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true})
	if b := (componenttest.Env{}).Build(t, "", "type: FormatsTestWrite\nconfig: {format: AVRO}", events); b.Err() != nil {
		t.Fatal(b.Err())
	}
	value, null, err := built.writing.NewEncoder()(nil, events, schemas.Row{int64(1), "a"})
	if err != nil || null {
		t.Fatalf("AVRO encode: %v (null %v)", err, null)
	}
	schema := `{"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]}]}`
	b = componenttest.Env{}.Build(t, "", "type: FormatsTestRead\nconfig: {format: AVRO, schema: '"+schema+"'}")
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	if row, err := built.reading.NewDecoder()(value); err != nil || !reflect.DeepEqual(row, schemas.Row{int64(1), "a"}) {
		t.Errorf("AVRO read back: %v, %v", row, err)
	}
}

// `sluice schema` shows the block's keys as the embedding config's own.
func TestConfigJSONSchema(t *testing.T) {
	props := component.JSONSchema(reflect.TypeFor[writeConfig]())["properties"].(map[string]any)
	var keys []string
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"confluent_schema_registry_subject", "confluent_schema_registry_url", "file_descriptor_path", "format", "message_name", "schema"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if required := component.JSONSchema(reflect.TypeFor[writeConfig]())["required"]; !reflect.DeepEqual(required, []string{"format"}) {
		t.Errorf("required %v", required)
	}
}
