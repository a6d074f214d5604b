package kafka

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/sluicehq/sluice/schemas/confluent/confluenttest"
	"github.com/twmb/franz-go/pkg/sr"
)

// avroOrderV3 is avroOrder with two more fields: score, nullable without a default, and note,
// a string with a default.
const avroOrderV3 = `{"type": "record", "name": "Order", "fields": [
  {"name": "id", "type": "long"},
  {"name": "item", "type": ["null", "string"]},
  {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "score", "type": ["double", "null"]},
  {"name": "note", "type": "string", "default": "none"}]}`

// With follow_schema_updates, a writer's schema registered after the source was built that
// adds fields adds them to the rows, at their end after the metadata fields, nullable: the
// batch's schema is the grown one, and the rows of the older writer read null there, before
// and after the change.
func TestRegistryFollowsSchemaUpdates(t *testing.T) {
	g := confluenttest.NewServer(t)
	topic := newTopic(t, 1)
	v1 := g.Add(confluent.SubjectFor(topic), sr.Schema{Schema: avroOrder})
	apple := "apple"
	at := time.UnixMilli(1700000000123).UTC()
	v3 := g.Add(confluent.SubjectFor(topic), sr.Schema{Schema: avroOrderV3})
	v3Value, err := avro.Marshal(avro.MustParse(avroOrderV3), map[string]any{"id": int64(2), "item": nil, "at": at, "score": 1.5, "note": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	produce(t, topic, 0, confluenttest.WireValue(v1, avroValue(t, 1, &apple, at)), confluenttest.WireValue(v3, v3Value),
		confluenttest.WireValue(v1, avroValue(t, 3, &apple, at)))
	// The reader's schema is v1: given as the schema, as the subject's latest would be at build.
	base := []string{"format: AVRO", "confluent_schema_registry_url: " + g.URL, "schema: '" + oneLine(avroOrder) + "'",
		"auto_offset_reset_config: earliest"}
	_, out, _, err := readSource(t, config(topic, append(base, "follow_schema_updates: true", "with_metadata: true")...), nil)
	if err != nil {
		t.Fatal(err)
	}
	batches := out[component.Main]
	last := batches[len(batches)-1].Schema
	wantNames := []string{"id", "item", "at", "kafka_key", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_headers", "score", "note"}
	if !slices.Equal(last.Names(), wantNames) {
		t.Fatalf("schema %v, want fields %v", last, wantNames)
	}
	for _, name := range []string{"score", "note"} {
		if f, _ := last.Field(name); !f.Nullable {
			t.Errorf("added field %s is not nullable: %v", name, last)
		}
	}
	rows := out.Rows(component.Main)
	if len(rows) != 3 {
		t.Fatalf("rows %v, want 3", rows)
	}
	tail := func(r schemas.Row) []any { return r[len(r)-2:] }
	for i, want := range [][]any{{nil, nil}, {1.5, "hi"}, {nil, nil}} {
		if len(rows[i]) != len(wantNames) && i > 0 {
			t.Errorf("row %d has %d values, want %d", i, len(rows[i]), len(wantNames))
			continue
		}
		if i == 0 && len(rows[0]) == len(wantNames)-2 {
			continue // decoded before the change, in a batch of its own
		}
		if got := tail(rows[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("row %d ends %v, want %v", i, got, want)
		}
		if rows[i][4] != topic { // kafka_topic stays where it was
			t.Errorf("row %d: kafka_topic %v, want %s", i, rows[i][4], topic)
		}
	}

	// Without the key, the rows keep the reader's schema: the added fields are left out.
	_, out, _, err = readSource(t, config(topic, base...), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Rows(component.Main) {
		if len(r) != 3 {
			t.Fatalf("without follow_schema_updates: row %v, want the reader's 3 fields", r)
		}
	}
}
