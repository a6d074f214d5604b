package kafka

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// The Java consumer properties that matter land in the client settings; consumer_config_updates
// overrides consumer_config, auto_offset_reset_config overrides both; unknown ones are ignored.
func TestConsumerConfigMapping(t *testing.T) {
	src := `type: ReadFromKafka
config:
  topic: t
  bootstrap_servers: "a:9092, b:9093"
  format: RAW
  consumer_config:
    group.id: first
    auto.offset.reset: earliest
    isolation.level: read_uncommitted
    max.poll.records: 10
    fetch.max.bytes: 1048576
    max.partition.fetch.bytes: 65536
    fetch.max.wait.ms: 250
    session.timeout.ms: 30000
    client.id: reader
    allow.auto.create.topics: false
    enable.auto.commit: true
    some.unknown.property: x
  consumer_config_updates:
    group.id: second
`
	s := build(t, src).Component.(*source).set
	if !slices.Equal(s.bootstrap, []string{"a:9092", "b:9093"}) || s.group != "second" || s.reset != "earliest" ||
		s.readCommitted || s.maxPoll != 10 || len(s.fetch) != 3 || s.session != 30*time.Second || s.clientID != "reader" || s.autoCreate {
		t.Errorf("settings %+v", s)
	}
	if !slices.Equal(s.ignored, []string{"some.unknown.property"}) {
		t.Errorf("ignored %v", s.ignored)
	}
	s = build(t, src+"  auto_offset_reset_config: LATEST\n").Component.(*source).set
	if s.reset != "latest" {
		t.Errorf("auto_offset_reset_config did not win: %q", s.reset)
	}
	s = build(t, "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: embedded, format: RAW}").Component.(*source).set
	if s.reset != "latest" || !s.readCommitted || s.maxPoll != defaultMaxPoll || !s.autoCreate {
		t.Errorf("defaults %+v", s)
	}
}

func TestProducerConfigMapping(t *testing.T) {
	src := `type: WriteToKafka
config:
  topic: t
  bootstrap_servers: x:1
  format: JSON
  producer_config_updates:
    batch.size: 65536
    linger.ms: 5
    compression.type: ZSTD
    acks: "1"
    enable.idempotence: "false"
    client.id: writer
    transaction.timeout.ms: 120000
    delivery.timeout.ms: 60000
`
	b := componenttest.Env{File: testFile}
	// acks=1 is fine at_least_once only.
	built := b.Build(t, "", src, people)
	if built.Err() == nil {
		t.Fatal("acks=1 was accepted for exactly_once")
	}
	if got := strings.Join(built.Diags, "\n"); !strings.Contains(got, "pipeline.yaml:10:11: WriteToKafka: delivery exactly_once writes with transactions, which need acks=all, not acks=1 (or use options.delivery: at_least_once)") {
		t.Errorf("diagnostics %s", got)
	}
	// acks=1 (or 0) is refused at_least_once too: a checkpoint could cover unstored records.
	if _, err := atLeastOnce(t, src); err == nil || !strings.Contains(err.Error(), "pipeline.yaml:10:11: WriteToKafka: acks=1 lets a checkpoint cover records the brokers never stored") {
		t.Errorf("acks=1 at_least_once: %v", err)
	}
	s := buildAtLeastOnce(t, strings.Replace(src, `acks: "1"`, `acks: all`, 1)).set
	if s.acks != "all" || s.idempotence() || s.compression != "zstd" || len(s.produce) != 3 || s.clientID != "writer" || s.txnTimeout != 2*time.Minute {
		t.Errorf("settings %+v", s)
	}
}

// buildAtLeastOnce builds a sink snippet as the runner does for a pipeline with
// delivery: at_least_once.
func buildAtLeastOnce(t *testing.T, src string) *sink {
	t.Helper()
	s, err := atLeastOnce(t, src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// atLeastOnce builds a sink snippet for delivery: at_least_once, returning its problems.
func atLeastOnce(t *testing.T, src string) (*sink, error) {
	t.Helper()
	d, root := componenttest.Env{File: testFile}.Parse(t, src)
	spec, _ := component.Lookup("WriteToKafka")
	c := &component.Context{Decoder: d, Type: "WriteToKafka", Name: "WriteToKafka", Pos: d.At(root),
		Config: component.MappingValue(root, "config"), Inputs: []component.Input{{Name: "in", Schema: people}},
		Options: component.Options{Delivery: component.AtLeastOnce}}
	impl := spec.Build(c)
	if err := d.Diags.Err(); err != nil {
		return nil, err
	}
	return impl.(*sink), nil
}

// Config mistakes are reported at their position, all at once, and never repeat a secret.
func TestConfigErrors(t *testing.T) {
	raw := schemas.New(schemas.Field{Name: "a", Type: schemas.Type{Kind: schemas.Int64}}, schemas.Field{Name: "b", Type: schemas.Type{Kind: schemas.String}})
	cases := []struct {
		name, src string
		input     *schemas.Schema
		want      []string
	}{
		{"read bad properties", `type: ReadFromKafka
config:
  topic: t
  bootstrap_servers: x:1
  format: RAW
  consumer_config:
    max.poll.records: lots
    isolation.level: dirty
    sasl.jaas.config: "secret-password"
    ssl.cipher.suites: TLS_AES_128_GCM_SHA256
`, nil, []string{
			`pipeline.yaml:7:23: ReadFromKafka: consumer_config "max.poll.records": must be an integer from 1 to 1048576, not "lots"`,
			`pipeline.yaml:8:22: ReadFromKafka: consumer_config "isolation.level": must be one of read_committed, read_uncommitted, not "dirty"`,
			`pipeline.yaml:9:23: ReadFromKafka: consumer_config "sasl.jaas.config": must start with a login module, such as org.apache.kafka.common.security.plain.PlainLoginModule (the value is not shown)`,
			`pipeline.yaml:10:24: ReadFromKafka: consumer_config "ssl.cipher.suites" is not supported: see docs/kafka.md for the security properties sluice understands`,
		}},
		{"read needs schema", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1}\n", nil, []string{
			`pipeline.yaml:2:9: ReadFromKafka: format AVRO (the default format) needs a schema: the Avro schema of the values`}},
		{"read json needs schema", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: JSON}\n", nil, []string{
			`pipeline.yaml:2:52: ReadFromKafka: format JSON needs a schema: the JSON Schema of the records`}},
		{"read raw takes no schema", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, schema: {type: object}}\n", nil, []string{
			`pipeline.yaml:2:65: ReadFromKafka: format RAW takes no schema: its rows are {payload: bytes}`}},
		{"read bad avro", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, schema: '{\"type\": \"string\"}'}\n", nil, []string{
			`pipeline.yaml:2:52: ReadFromKafka: avro schema: the root must be a record, got string`}},
		{"read registry", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, confluent_schema_registry_url: http://r}\n", nil, []string{
			`pipeline.yaml:2:88: ReadFromKafka: values in the Confluent wire format are read with format AVRO or JSON, not RAW`}},
		{"read registry subject alone", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, confluent_schema_registry_subject: s}\n", nil, []string{
			`pipeline.yaml:2:79: ReadFromKafka: confluent_schema_registry_subject needs confluent_schema_registry_url`}},
		{"read registry bad url", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, confluent_schema_registry_url: 'ftp://u:secret-password@h'}\n", nil, []string{
			`pipeline.yaml:2:75: ReadFromKafka: confluent_schema_registry_url: "ftp://***@h" is not an http or https URL`}},
		{"read registry several topics", "type: ReadFromKafka\nconfig: {topic: [a, b], bootstrap_servers: x:1, confluent_schema_registry_url: 'http://h'}\n", nil, []string{
			`pipeline.yaml:2:80: ReadFromKafka: without a schema, the reader's schema is the latest of a subject of the registry, and with several topics confluent_schema_registry_subject must say which`}},
		{"read env missing", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, consumer_config: {group.id: '${env:SLUICE_TEST_UNSET}'}}\n", nil, []string{
			`pipeline.yaml:2:85: ReadFromKafka: consumer_config "group.id": environment variable SLUICE_TEST_UNSET is not set`}},
		{"read env bad value", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, consumer_config: {max.poll.records: '${env:SLUICE_TEST_SECRET}'}}\n", nil, []string{
			`pipeline.yaml:2:93: ReadFromKafka: consumer_config "max.poll.records": must be an integer from 1 to 1048576 (the value from ${env:SLUICE_TEST_SECRET} is not shown)`}},
		{"read file missing", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, consumer_config: {sasl.password: '${file:/nonexistent/sluice-test-secret}'}}\n", nil, []string{
			`pipeline.yaml:2:90: ReadFromKafka: consumer_config "sasl.password": cannot read the secret file /nonexistent/sluice-test-secret: no such file or directory`}},
		{"write registry raw", "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW, confluent_schema_registry_url: 'http://h'}\n", rawSchema, []string{
			`pipeline.yaml:2:88: WriteToKafka: values in the Confluent wire format are written with format AVRO or JSON, not RAW`}},
		{"write registry subject alone", "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: JSON, confluent_schema_registry_subject: s}\n", people, []string{
			`pipeline.yaml:2:93: WriteToKafka: confluent_schema_registry_subject needs confluent_schema_registry_url`}},
		{"read empty servers", "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: ' , ', format: RAW}\n", nil, []string{
			`pipeline.yaml:2:39: ReadFromKafka needs bootstrap_servers: host:port pairs separated by commas, or embedded`}},
		{"write raw shape", "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: RAW}\n", raw, []string{
			`pipeline.yaml:1:1: WriteToKafka with format RAW writes one bytes or string field per record, but its input "in0" has rows {a integer, b string}` +
				"\n\thint: map the rows to a single field first, e.g. MapToFields with fields: {payload: ...}"}},
		{"write json schema", "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: JSON, schema: x}\n", people, []string{
			`pipeline.yaml:2:66: WriteToKafka: schema is only used with format AVRO; format JSON writes the input's fields`}},
		{"write avro mismatch", `type: WriteToKafka
config:
  topic: t
  bootstrap_servers: x:1
  format: AVRO
  schema: '{"type": "record", "name": "P", "fields": [{"name": "id", "type": "string"}, {"name": "name", "type": "string"}]}'
`, people, []string{
			`pipeline.yaml:6:11: WriteToKafka: the Avro schema does not fit input "in0": field "id" holds integer values, but the Avro schema has string there`}},
		{"write avro missing field", `type: WriteToKafka
config:
  topic: t
  bootstrap_servers: x:1
  format: AVRO
  schema: '{"type": "record", "name": "P", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "age", "type": "long"}]}'
`, people, []string{
			`pipeline.yaml:6:11: WriteToKafka: the Avro schema does not fit input "in0": the Avro record's field "age" is not in the input and cannot be null`}},
		{"proto keys with another format", "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: x:1, format: JSON, message_name: M}\n", people, []string{
			`pipeline.yaml:2:72: WriteToKafka: message_name is for format PROTO, and the format is JSON`}},
	}
	t.Setenv("SLUICE_TEST_SECRET", "secret-password")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var inputs []*schemas.Schema
			if c.input != nil {
				inputs = append(inputs, c.input)
			}
			got := buildErrors(t, c.src, inputs...)
			if got != strings.Join(c.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, strings.Join(c.want, "\n"))
			}
			if strings.Contains(got, "secret-password") {
				t.Error("a diagnostic repeats a secret")
			}
		})
	}
}

// docs/kafka.md documents every Java property sluice maps.
func TestDocsListProperties(t *testing.T) {
	doc, err := os.ReadFile("../../docs/kafka.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range properties {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/kafka.md does not mention `%s`", name)
		}
	}
}

// bootstrap_servers: embedded reaches the process's in-process broker.
func TestEmbedded(t *testing.T) {
	src := build(t, "type: ReadFromKafka\nconfig: {topic: embedded-test, bootstrap_servers: embedded, format: STRING, auto_offset_reset_config: earliest}").Component.(*source)
	src.StopAtEnd()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := src.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := componenttest.Emitted{}
	if err := componenttest.ReadAll(ctx, src, out.Emit); err != nil {
		t.Fatal(err)
	}
	if n := len(src.Offsets()["kafka:embedded-test"]); n == 0 {
		t.Errorf("no partitions of the created topic: %v", src.Offsets())
	}
}

// The config types describe themselves for `sluice schema`.
func TestConfigJSONSchema(t *testing.T) {
	for _, name := range []string{"ReadFromKafka", "WriteToKafka"} {
		spec, ok := component.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		s := component.JSONSchema(spec.Config)
		if props, _ := s["properties"].(map[string]any); props["topic"] == nil || props["bootstrap_servers"] == nil {
			t.Errorf("%s: schema %v", name, s)
		}
	}
}

// With exactly_once a fetch waits for fuller batches a quarter of the run's epoch interval, within
// franz-go's least wait and 250 ms: a record waits in the broker that long at most on top of
// its epoch (issue 21).
func TestBatchFetchWaitFollowsEpochs(t *testing.T) {
	src := build(t, "type: ReadFromKafka\nconfig: {topic: t, bootstrap_servers: embedded, format: RAW}").Component.(*source)
	for _, c := range []struct{ epoch, want time.Duration }{
		{0, 250 * time.Millisecond},                    // not told: the longest
		{20 * time.Millisecond, 10 * time.Millisecond}, // franz-go's least
		{50 * time.Millisecond, 12500 * time.Microsecond},
		{200 * time.Millisecond, 50 * time.Millisecond},
		{2 * time.Second, 250 * time.Millisecond},
		{time.Minute, 250 * time.Millisecond},
	} {
		src.SetEpochInterval(c.epoch)
		if got := batchFetchWait(src.set.epoch); got != c.want {
			t.Errorf("epochs of %v: a fetch waits %v, want %v", c.epoch, got, c.want)
		}
	}
}
