package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	sluiceavro "github.com/sluicehq/sluice/schemas/avro"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/sluicehq/sluice/schemas/confluent/confluenttest"
	"github.com/twmb/franz-go/pkg/sr"
)

// avroOrderV2 is avroOrder with one more field, with a default.
const avroOrderV2 = `{"type": "record", "name": "Order", "fields": [
  {"name": "id", "type": "long"},
  {"name": "item", "type": ["null", "string"]},
  {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "note", "type": "string", "default": "none"}]}`

func oneLine(schema string) string { return strings.ReplaceAll(schema, "\n", " ") }

// Values in the Confluent wire format are decoded with the writer's schema, fetched once per
// id, into the reader's schema: the subject's latest (resolved when the source is built) or the
// config's. A writer with an extra field reads into the older reader; a reader with an extra
// field fills it with its default. Wrong magic bytes and unknown ids go to the error output
// with their position, or stop the pipeline without error_handling.
func TestRegistryReadAvro(t *testing.T) {
	g := confluenttest.NewServer(t)
	topic := newTopic(t, 1)
	v1 := g.Add(confluent.SubjectFor(topic), sr.Schema{Schema: avroOrder})
	v2 := g.Add(confluent.SubjectFor(topic), sr.Schema{Schema: avroOrderV2})
	apple := "apple"
	at := time.UnixMilli(1700000000123).UTC()
	v2Value, err := avro.Marshal(avro.MustParse(avroOrderV2), map[string]any{"id": int64(8), "item": nil, "at": at, "note": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	offs := produce(t, topic, 0,
		confluenttest.WireValue(v1, avroValue(t, 7, &apple, at)),
		confluenttest.WireValue(v2, v2Value),
		avroValue(t, 9, &apple, at), // no header
		confluenttest.WireValue(42, avroValue(t, 10, &apple, at)))
	registry := "confluent_schema_registry_url: " + g.URL
	cases := []struct {
		name, schema string
		want         []schemas.Row
	}{
		{"latest", "", []schemas.Row{{int64(7), "apple", at, "none"}, {int64(8), nil, at, "hi"}}},
		{"inline", "schema: '" + oneLine(avroOrder) + "'", []schemas.Row{{int64(7), "apple", at}, {int64(8), nil, at}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := g.Count(fmt.Sprintf("GET /schemas/ids/%d", v2))
			_, out, _, err := readSource(t, config(topic, "format: AVRO", registry, c.schema, "auto_offset_reset_config: earliest",
				"error_handling: {output: bad}"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Rows(component.Main); !reflect.DeepEqual(got, c.want) {
				t.Errorf("rows %v, want %v", got, c.want)
			}
			bad := out.Rows("bad")
			if len(bad) != 2 {
				t.Fatalf("error rows %v, want 2", bad)
			}
			for i, want := range []struct {
				offset int64
				msg    string
			}{{offs[2], "not in the Confluent wire format"}, {offs[3], "schema id 42 is not in the schema registry at " + g.URL}} {
				src := bad[i][2].(map[string]any)
				if src["offset"] != want.offset || !strings.Contains(bad[i][1].(string), want.msg) {
					t.Errorf("error row %d: %v at %v, want %q at offset %d", i, bad[i][1], src, want.msg, want.offset)
				}
			}
			if n := g.Count(fmt.Sprintf("GET /schemas/ids/%d", v2)) - before; n != 1 {
				t.Errorf("schema id %d fetched %d times, want once (cached)", v2, n)
			}
		})
	}
	_, _, _, err = readSource(t, config(topic, "format: AVRO", registry, "auto_offset_reset_config: earliest"), nil)
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != offs[2] || !strings.Contains(err.Error(), "magic byte") {
		t.Errorf("without error_handling: %v, want a RowError at offset %d", err, offs[2])
	}
}

// A writer's schema that cannot be read as the reader's (a field of another type, a missing
// field without default) fails the records written with it, with a message that says why.
func TestRegistryReadIncompatible(t *testing.T) {
	g := confluenttest.NewServer(t)
	topic := newTopic(t, 1)
	other := `{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}`
	id := g.Add("elsewhere", sr.Schema{Schema: other})
	value, err := avro.Marshal(avro.MustParse(other), map[string]any{"id": "x"})
	if err != nil {
		t.Fatal(err)
	}
	produce(t, topic, 0, confluenttest.WireValue(id, value))
	_, out, _, err := readSource(t, config(topic, "format: AVRO", "confluent_schema_registry_url: "+g.URL,
		"schema: '"+oneLine(avroOrder)+"'", "auto_offset_reset_config: earliest", "error_handling: {output: bad}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := out.Rows("bad")
	if len(bad) != 1 || !strings.Contains(bad[0][1].(string), fmt.Sprintf(`the writer's schema (id %d) cannot be read with the reader's schema: avro field "id": the writer's schema has string there, which cannot be read as the reader's long`, id)) {
		t.Errorf("error rows %v", bad)
	}
}

// WriteToKafka registers the values' schema under <topic>-value and heads every value with its
// id; ReadFromKafka reads them back with the registry alone, for AVRO and JSON.
func TestRegistryWriteRoundTrip(t *testing.T) {
	at := time.UnixMicro(1700000000123456).UTC()
	events := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
		schemas.Field{Name: "at", Type: schemas.Type{Kind: schemas.Timestamp}},
		schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}})
	rows := []schemas.Row{{int64(1), "a", at, []any{"x", "y"}}, {int64(2), nil, at, []any{}}}
	for _, c := range []struct {
		format string
		typ    sr.SchemaType
	}{{"AVRO", sr.TypeAvro}, {"JSON", sr.TypeJSON}} {
		t.Run(c.format, func(t *testing.T) {
			g := confluenttest.NewServer(t)
			h := newHarness(t, component.AtLeastOnce)
			registry := "confluent_schema_registry_url: " + g.URL
			h.writeOnce(config(h.topic, "format: "+c.format, registry), events, rows)
			ids := g.Subject(confluent.SubjectFor(h.topic))
			if len(ids) != 1 || g.Schema(ids[0]).Type != c.typ {
				t.Fatalf("registered %v under %s", ids, confluent.SubjectFor(h.topic))
			}
			for _, v := range all(readTopic(t, h.topic, true)) {
				if id, _, err := confluent.Split([]byte(v)); err != nil || id != ids[0] {
					t.Errorf("value %q does not start with the header of schema id %d", v, ids[0])
				}
			}
			_, out, _, err := readSource(t, config(h.topic, "format: "+c.format, registry, "auto_offset_reset_config: earliest"), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := out.Rows(component.Main)
			sort.Slice(got, func(i, j int) bool { return got[i][0].(int64) < got[j][0].(int64) })
			if !reflect.DeepEqual(got, rows) {
				t.Errorf("read back %v, want %v", got, rows)
			}
		})
	}
}

// With auto.register.schemas=false the sink only looks its schema up: a schema the subject
// does not have stops it at Open, with the registry's answer.
func TestRegistryLookupOnly(t *testing.T) {
	g := confluenttest.NewServer(t)
	h := newHarness(t, component.AtLeastOnce)
	src := "type: WriteToKafka\nconfig:\n" + config(h.topic, "format: AVRO", "confluent_schema_registry_url: "+g.URL,
		"producer_config_updates: {auto.register.schemas: \"false\"}")
	s := buildFor(t, component.AtLeastOnce, src, people).Component.(*sink)
	ctx := context.Background()
	info := component.SinkInfo{Pipeline: h.pipeline, Lanes: 1}
	if _, err := s.Open(ctx, info); err == nil || !strings.Contains(err.Error(), "auto.register.schemas is false") || !strings.Contains(err.Error(), "Schema not found") {
		t.Fatalf("Open: %v, want the lookup's failure", err)
	}
	text, err := sluiceavro.SchemaFor(people)
	if err != nil {
		t.Fatal(err)
	}
	id := g.Add(confluent.SubjectFor(h.topic), sr.Schema{Schema: text})
	if _, err := s.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if got := s.header; !reflect.DeepEqual(got, confluent.Header(id)) {
		t.Errorf("header %v, want schema id %d's", got, id)
	}
	if n := g.Count("POST /subjects/" + confluent.SubjectFor(h.topic) + "/versions"); n != 0 {
		t.Errorf("registered %d times", n)
	}
}

// Credentials reach the registry from the URL or from basic.auth.user.info (also through
// ${env:NAME}), and never appear in a message.
func TestRegistryCredentials(t *testing.T) {
	confluenttest.FewAttempts(t)
	const secret = "pw-s3cret"
	g := confluenttest.NewServer(t)
	g.User, g.Pass = "reader", secret
	topic := newTopic(t, 1)
	id := g.Add(confluent.SubjectFor(topic), sr.Schema{Schema: avroOrder})
	apple := "apple"
	produce(t, topic, 0, confluenttest.WireValue(id, avroValue(t, 1, &apple, time.UnixMilli(0))))
	t.Setenv("SLUICE_TEST_SR_AUTH", "reader:"+secret)
	for _, line := range []string{
		"confluent_schema_registry_url: " + g.URLWith("reader", secret),
		"confluent_schema_registry_url: " + g.URL + "\n  consumer_config: {basic.auth.user.info: '${env:SLUICE_TEST_SR_AUTH}'}",
	} {
		_, out, _, err := readSource(t, config(topic, "format: AVRO", line, "auto_offset_reset_config: earliest"), nil)
		if err != nil || len(out.Rows(component.Main)) != 1 {
			t.Errorf("%s: read %v, %v", line, out.Rows(component.Main), err)
		}
	}
	for _, c := range []struct{ line, want string }{
		{"confluent_schema_registry_url: " + g.URLWith("reader", "wrong-"+secret), "Unauthorized"},
		{"confluent_schema_registry_url: " + g.URL + "\n  consumer_config: {basic.auth.user.info: 'reader:wrong-" + secret + "'}", "Unauthorized"},
		{"confluent_schema_registry_url: " + g.URLWith("reader", secret) + ":x", "is not an http or https URL"},
		{"confluent_schema_registry_url: " + g.URL + "\n  consumer_config: {basic.auth.user.info: '" + secret + "'}", "must be user:password (the value is not shown)"},
	} {
		got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config(topic, "format: AVRO", c.line))
		if !strings.Contains(got, c.want) || strings.Contains(got, secret) {
			t.Errorf("%s:\n%s\nwant %q, without the password", c.line, got, c.want)
		}
	}
}

// A registry that cannot be reached when a reader's schema must come from it is a config error
// that says so; one that goes away while reading stops the pipeline (the records are not
// bad, they are read again on the next run) instead of sending records to the error output.
func TestRegistryUnavailable(t *testing.T) {
	confluenttest.FewAttempts(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config("t", "format: AVRO", "confluent_schema_registry_url: "+gone))
	if want := `the latest schema of subject "t-value" could not be read`; !strings.Contains(got, want) || !strings.Contains(got, "the registry must be reachable when the pipeline starts") {
		t.Errorf("diagnostics %s, want %q and a hint", got, want)
	}

	g := confluenttest.NewServer(t)
	topic := newTopic(t, 1)
	apple := "apple"
	produce(t, topic, 0, confluenttest.WireValue(1, avroValue(t, 1, &apple, time.UnixMilli(0))))
	g.Fail = func(*http.Request) bool { return true }
	_, out, _, err := readSource(t, config(topic, "format: AVRO", "confluent_schema_registry_url: "+g.URL, "schema: '"+oneLine(avroOrder)+"'",
		"auto_offset_reset_config: earliest", "error_handling: {output: bad}"), nil)
	var re *component.RowError
	if !errors.Is(err, confluent.ErrUnavailable) || errors.As(err, &re) || len(out.Rows("bad")) != 0 {
		t.Errorf("read: %v (error rows %v), want the pipeline stopped by the unavailable registry", err, out.Rows("bad"))
	}
}

// A registry that refuses the credentials (401) or what they ask (403) says so with the
// status, the registry's URL and what to check, at once (it is not asked again), and without
// the credentials (schemas/confluent's tests: while reading it stops the pipeline as an
// unavailable registry does).
func TestRegistryRefusesCredentials(t *testing.T) {
	const secret = "pw-s3cret"
	for _, c := range []struct {
		status int
		want   string
	}{
		{http.StatusUnauthorized, `401 Unauthorized from the schema registry at %URL%, fetching the latest schema of subject "t-value": check basic.auth.user.info`},
		{http.StatusForbidden, `403 Forbidden from the schema registry at %URL%, fetching the latest schema of subject "t-value": the credentials of basic.auth.user.info (or of the URL) are not allowed this`},
	} {
		srv, asked := confluenttest.Refusing(t, c.status, secret)
		want := strings.ReplaceAll(c.want, "%URL%", srv.URL)
		got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config("t", "format: AVRO", "confluent_schema_registry_url: "+srv.URL,
			"consumer_config: {basic.auth.user.info: 'reader:"+secret+"'}"))
		if !strings.Contains(got, want) || strings.Contains(got, secret) || asked.Load() != 1 {
			t.Errorf("after %d requests:\n%s\nwant %q, without the password", asked.Load(), got, want)
		}
	}
}
