package kafka

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// with_metadata appends each record's key, topic, partition, offset, timestamp and headers.
func TestReadWithMetadata(t *testing.T) {
	topic := newTopic(t, 1)
	at := time.UnixMilli(1700000000000).UTC()
	cl := testClient(t)
	res := cl.ProduceSync(context.Background(),
		&kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("a"), Timestamp: at,
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-1")}}},
		&kgo.Record{Topic: topic, Value: []byte("b"), Timestamp: at})
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, out, _, err := readSource(t, config(topic, "format: STRING", "with_metadata: true", "auto_offset_reset_config: earliest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []schemas.Row{
		{"a", []byte("k1"), topic, int64(0), int64(0), at, map[string]any{"trace": "t-1"}},
		{"b", nil, topic, int64(0), int64(1), at, nil},
	}
	if got := out.Rows(component.Main); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n%v\nwant\n%v", got, want)
	}
	if s := out[component.Main][0].Schema; len(s.Fields) != 7 || s.Fields[6].Name != "kafka_headers" {
		t.Errorf("schema %v", s)
	}
}

func TestReadWithMetadataNameClash(t *testing.T) {
	got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config("t", "format: JSON", "with_metadata: true",
		"schema: {type: object, properties: {kafka_key: {type: string}}}"))
	if want := `pipeline.yaml:6:18: ReadFromKafka: the records already have a field "kafka_key", which with_metadata adds`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
