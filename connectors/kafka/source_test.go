package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const avroOrder = `{"type": "record", "name": "Order", "fields": [
  {"name": "id", "type": "long"},
  {"name": "item", "type": ["null", "string"]},
  {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}`

func avroValue(t *testing.T, id int64, item *string, at time.Time) []byte {
	t.Helper()
	s := avro.MustParse(avroOrder)
	m := map[string]any{"id": id, "item": nil, "at": at}
	if item != nil {
		m["item"] = *item
	}
	b, err := avro.Marshal(s, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every format reads what a plain producer wrote, with the record's position and timestamp.
func TestReadFormats(t *testing.T) {
	apple := "apple"
	at := time.UnixMilli(1700000000123).UTC()
	cases := []struct {
		format string
		schema string
		values [][]byte
		want   []schemas.Row
	}{
		{"RAW", "", strs("a", "", "\x00\xff"), []schemas.Row{{[]byte("a")}, {[]byte{}}, {[]byte{0, 0xff}}}},
		{"STRING", "", strs("héllo", "x"), []schemas.Row{{"héllo"}, {"x"}}},
		{"JSON", "schema: {type: object, properties: {id: {type: integer}, name: {type: string}}, required: [id]}",
			strs(`{"id": 1, "name": "a"}`, `{"id": 2}`), []schemas.Row{{int64(1), "a"}, {int64(2), nil}}},
		{"AVRO", "schema: '" + strings.ReplaceAll(avroOrder, "\n", " ") + "'",
			[][]byte{avroValue(t, 7, &apple, at), avroValue(t, 8, nil, at)},
			[]schemas.Row{{int64(7), "apple", at}, {int64(8), nil, at}}},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			topic := newTopic(t, 2)
			offs := produce(t, topic, 1, c.values...)
			src, out, _, err := readSource(t, config(topic, "format: "+c.format, c.schema, "auto_offset_reset_config: earliest"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Rows(component.Main); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
			for i, p := range out.Positions(component.Main) {
				if want := (schemas.Position{Source: "kafka:" + topic, Partition: 1, Offset: offs[i]}); p != want {
					t.Errorf("row %d at %v, want %v", i, p, want)
				}
			}
			if got := out[component.Main][0].Time[0]; !got.Equal(time.UnixMilli(1700000000000)) {
				t.Errorf("event time %v, want the record timestamp", got)
			}
			want := schemas.Offsets{"kafka:" + topic: {0: 0, 1: offs[len(offs)-1] + 1}}
			if got := src.Offsets(); !got.Equal(want) {
				t.Errorf("offsets %v, want %v", got, want)
			}
		})
	}
}

// Read hands out one partition's records per batch, at most max.poll.records of them, and
// Offsets covers only what it returned.
func TestReadBatchesPerPartition(t *testing.T) {
	topic := newTopic(t, 3)
	for p := range int32(3) {
		produce(t, topic, p, strs("a", "b", "c", "d", "e")...)
	}
	src, out, batches, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: earliest",
		"consumer_config: {max.poll.records: 2}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Rows(component.Main)); n != 15 {
		t.Fatalf("read %d rows, want 15", n)
	}
	next := map[int32]int64{}
	for _, b := range batches {
		if len(b.Raw) > 2 {
			t.Errorf("a batch of %d records, max.poll.records is 2", len(b.Raw))
		}
		for _, p := range b.Pos {
			if p.Partition != b.Pos[0].Partition {
				t.Fatalf("a batch mixes partitions: %v", b.Pos)
			}
			if p.Offset != next[p.Partition] {
				t.Fatalf("partition %d: offset %d after %d", p.Partition, p.Offset, next[p.Partition]-1)
			}
			next[p.Partition]++
		}
	}
	if want := (schemas.Offsets{"kafka:" + topic: {0: 5, 1: 5, 2: 5}}); !src.Offsets().Equal(want) {
		t.Errorf("offsets %v, want %v", src.Offsets(), want)
	}
}

// A bounded read returns exactly max_num_records records, and its offsets cover exactly them.
func TestMaxNumRecords(t *testing.T) {
	topic := newTopic(t, 1)
	produce(t, topic, 0, strs("1", "2", "3", "4", "5", "6", "7")...)
	src, out, _, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: earliest", "max_num_records: 4"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Rows(component.Main); len(got) != 4 || got[3][0] != "4" {
		t.Fatalf("rows %v, want 1..4", got)
	}
	if want := (schemas.Offsets{"kafka:" + topic: {0: 4}}); !src.Offsets().Equal(want) {
		t.Errorf("offsets %v, want %v", src.Offsets(), want)
	}
}

func TestMaxReadTime(t *testing.T) {
	topic := newTopic(t, 1)
	produce(t, topic, 0, strs("1", "2")...)
	start := time.Now()
	_, out, _, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: earliest", "max_read_time_seconds: 1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second || took > 8*time.Second {
		t.Errorf("the read ended after %v, want about 1s", took)
	}
	if n := len(out.Rows(component.Main)); n != 2 {
		t.Errorf("read %d rows, want 2", n)
	}
}

// Resuming starts each partition at the given offset; partitions without one start at the
// default. Offsets beyond the end or below the start stop the source with a clear error.
func TestResume(t *testing.T) {
	topic := newTopic(t, 2)
	produce(t, topic, 0, strs("a0", "a1", "a2", "a3")...)
	produce(t, topic, 1, strs("b0", "b1")...)
	src := "kafka:" + topic
	_, out, _, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: earliest"), schemas.Offsets{src: {0: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	if strings.Join(got, ",") != "a2,a3,b0,b1" && strings.Join(got, ",") != "b0,b1,a2,a3" {
		t.Errorf("resumed to %v, want a2 a3 b0 b1", got)
	}

	_, _, _, err = readSource(t, config(topic, "format: STRING"), schemas.Offsets{src: {1: 9}})
	if err == nil || !strings.Contains(err.Error(), "partition 1 at offset 9, but the partition ends at offset 2") {
		t.Errorf("resume beyond the end: %v", err)
	}
	adm := kadm.NewClient(testClient(t))
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3})
	if _, err := adm.DeleteRecords(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = readSource(t, config(topic, "format: STRING"), schemas.Offsets{src: {0: 1}})
	if err == nil || !strings.Contains(err.Error(), "records 1 to 2 were deleted") {
		t.Errorf("resume below the start: %v", err)
	}
}

// latest starts at the end as of Open, and Offsets holds that position from the start, so a
// checkpoint pins it.
func TestLatest(t *testing.T) {
	topic := newTopic(t, 1)
	produce(t, topic, 0, strs("old1", "old2")...)
	s := build(t, "type: ReadFromKafka\nconfig:\n"+config(topic, "format: STRING")).Component.(*source)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := (schemas.Offsets{"kafka:" + topic: {0: 2}}); !s.Offsets().Equal(want) {
		t.Errorf("offsets at start %v, want %v", s.Offsets(), want)
	}
	produce(t, topic, 0, strs("new")...)
	b, err := s.Read(ctx)
	for err == nil && b == nil {
		b, err = s.Read(ctx)
	}
	if err != nil || len(b.Raw) != 1 || string(b.Raw[0]) != "new" {
		t.Fatalf("read %v, %v; want the record produced after Open", b, err)
	}
}

// A Read waiting on a quiet topic returns promptly when its context is cancelled.
func TestReadReturnsOnCancel(t *testing.T) {
	topic := newTopic(t, 1)
	s := build(t, "type: ReadFromKafka\nconfig:\n"+config(topic, "format: RAW")).Component.(*source)
	if err := s.Open(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	b, err := s.Read(ctx)
	if b != nil || (err != nil && !errors.Is(err, context.DeadlineExceeded)) {
		t.Fatalf("Read = %v, %v; want nothing", b, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Read returned %v after its context ended", took-200*time.Millisecond)
	}
}

// Records that do not decode go to the error output with their position; without
// error_handling, Decode stops at the first one.
func TestDecodeErrors(t *testing.T) {
	apple := "apple"
	cases := []struct {
		name, format, schema string
		good, bad            []byte
		msg                  string
	}{
		{"json", "JSON", "schema: {type: object, properties: {id: {type: integer}}}", []byte(`{"id": 1}`), []byte(`{"id": "x"`), "JSON"},
		{"json-type", "JSON", "schema: {type: object, properties: {id: {type: integer}}}", []byte(`{"id": 1}`), []byte(`{"id": "x"}`), "id"},
		{"avro", "AVRO", "schema: '" + strings.ReplaceAll(avroOrder, "\n", " ") + "'", avroValue(t, 1, &apple, time.Unix(0, 0)), []byte{0x02, 0x08}, "avro"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := newTopic(t, 1)
			offs := produce(t, topic, 0, c.good, c.bad, c.good)
			_, out, _, err := readSource(t, config(topic, "format: "+c.format, c.schema, "auto_offset_reset_config: earliest",
				"error_handling: {output: bad}"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(out.Rows(component.Main)); n != 2 {
				t.Errorf("%d good rows, want 2", n)
			}
			bad := out.Rows("bad")
			if len(bad) != 1 {
				t.Fatalf("error rows %v, want 1", bad)
			}
			wantSource := map[string]any{"topic": "kafka:" + topic, "partition": int64(0), "offset": offs[1]}
			if !reflect.DeepEqual(bad[0][0], c.bad) || !reflect.DeepEqual(bad[0][2], wantSource) || !strings.Contains(bad[0][1].(string), c.msg) {
				t.Errorf("error row %q, want the value, a message about %s and source %v", bad[0], c.msg, wantSource)
			}

			_, _, _, err = readSource(t, config(topic, "format: "+c.format, c.schema, "auto_offset_reset_config: earliest"), nil)
			var re *component.RowError
			if !errors.As(err, &re) || re.Pos != (schemas.Position{Source: "kafka:" + topic, Offset: offs[1]}) {
				t.Errorf("without error_handling: %v, want a RowError at offset %d", err, offs[1])
			}
		})
	}
}

// read_committed (the default) skips aborted transactions and ends at the last stable offset;
// read_uncommitted sees everything.
func TestIsolation(t *testing.T) {
	topic := newTopic(t, 1)
	ctx := context.Background()
	tx := testClient(t, kgo.TransactionalID("test-isolation-"+topic), kgo.DefaultProduceTopic(topic))
	for _, c := range []struct {
		value  string
		commit kgo.TransactionEndTry
	}{{"committed", kgo.TryCommit}, {"aborted", kgo.TryAbort}, {"committed too", kgo.TryCommit}} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte(c.value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, c.commit); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		level string
		want  string
	}{{"read_committed", "committed,committed too"}, {"read_uncommitted", "committed,aborted,committed too"}} {
		src, out, _, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: earliest",
			"consumer_config: {isolation.level: "+c.level+"}"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out.Rows(component.Main) {
			got = append(got, r[0].(string))
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s read %v, want %s", c.level, got, c.want)
		}
		if next, _ := src.Offsets().Get("kafka:"+topic, 0); next != 6 {
			t.Errorf("%s: next offset %d, want 6 (after the last commit marker)", c.level, next)
		}
	}
}

// Ack commits the offsets to group.id, and a partition without a checkpoint starts at the
// group's committed offset.
func TestAckAndGroupOffsets(t *testing.T) {
	topic := newTopic(t, 2)
	produce(t, topic, 0, strs("a", "b", "c")...)
	produce(t, topic, 1, strs("x", "y")...)
	group := "g-" + topic
	s := build(t, "type: ReadFromKafka\nconfig:\n"+config(topic, "format: STRING", "consumer_config: {group.id: "+group+"}")).Component.(*source)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ack(ctx, schemas.Offsets{"kafka:" + topic: {0: 2, 1: 1}, "kafka:other": {0: 5}}); err != nil {
		t.Fatal(err)
	}
	fetched, err := kadm.NewClient(testClient(t)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 2, 1: 1} {
		if o, ok := fetched.Lookup(topic, p); !ok || o.At != want {
			t.Errorf("group offset of partition %d: %+v, want %d", p, o, want)
		}
	}
	_, out, _, err := readSource(t, config(topic, "format: STRING", "consumer_config: {group.id: "+group+"}"),
		schemas.Offsets{"kafka:" + topic: {1: 0}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	if g := strings.Join(got, ","); g != "c,x,y" && g != "x,y,c" {
		t.Errorf("read %v, want c (from the group offset) and x, y (from the checkpoint)", got)
	}
}

// Several topics are read together, each record positioned in its own topic.
func TestSeveralTopics(t *testing.T) {
	a, b := newTopic(t, 1), newTopic(t, 1)
	produce(t, a, 0, strs("a")...)
	produce(t, b, 0, strs("b")...)
	src, out, _, err := readSource(t, fmt.Sprintf("  topic: [%s, %s]\n  bootstrap_servers: %s\n  format: STRING\n  auto_offset_reset_config: earliest\n", a, b, testBroker), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Rows(component.Main)); n != 2 {
		t.Errorf("read %d rows, want 2", n)
	}
	if want := (schemas.Offsets{"kafka:" + a: {0: 1}, "kafka:" + b: {0: 1}}); !src.Offsets().Equal(want) {
		t.Errorf("offsets %v, want %v", src.Offsets(), want)
	}
}

// A source that is asked to stop at the end ends on an empty topic at once.
func TestStopAtEndEmpty(t *testing.T) {
	topic := newTopic(t, 2)
	_, out, _, err := readSource(t, config(topic, "format: RAW"), nil)
	if err != nil || len(out.Rows(component.Main)) != 0 {
		t.Fatalf("read %v, %v", out, err)
	}
}

// A partition the checkpoints do not hold, on a topic they do (one added since the last
// commit), is read from its start, whatever auto_offset_reset says: its records are new.
func TestResumeReadsNewPartitionFromStart(t *testing.T) {
	topic := newTopic(t, 2)
	produce(t, topic, 0, strs("a0", "a1")...)
	produce(t, topic, 1, strs("b0", "b1", "b2")...)
	_, out, _, err := readSource(t, config(topic, "format: STRING", "auto_offset_reset_config: latest"),
		schemas.Offsets{"kafka:" + topic: {0: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "a1,b0,b1,b2" {
		t.Errorf("read %v, want a1 (resumed) and b0..b2 (the new partition from its start)", got)
	}
}

// topic_pattern reads every topic whose whole name matches, and only those.
func TestTopicPattern(t *testing.T) {
	a, b := newTopic(t, 1), newTopic(t, 2)
	other := a + "-more" // matches only if the pattern is not anchored
	if _, err := kadm.NewClient(testClient(t)).CreateTopic(context.Background(), 1, 1, nil, other); err != nil {
		t.Fatal(err)
	}
	produce(t, a, 0, strs("a")...)
	produce(t, b, 1, strs("b")...)
	produce(t, other, 0, strs("other")...)
	pattern := regexp.QuoteMeta(a) + "|" + regexp.QuoteMeta(b[:len(b)-1]) + "[0-9]"
	src, out, _, err := readSource(t, fmt.Sprintf("  topic_pattern: '%s'\n  bootstrap_servers: %s\n  format: STRING\n  auto_offset_reset_config: earliest\n", pattern, testBroker), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("read %v, want a and b (not %s)", got, other)
	}
	if want := (schemas.Offsets{"kafka:" + a: {0: 1}, "kafka:" + b: {0: 0, 1: 1}}); !src.Offsets().Equal(want) {
		t.Errorf("offsets %v, want %v", src.Offsets(), want)
	}
	_, _, _, err = readSource(t, fmt.Sprintf("  topic_pattern: 'no-such-topic-.*'\n  bootstrap_servers: %s\n  format: STRING\n", testBroker), nil)
	if err == nil || !strings.Contains(err.Error(), `no topic matches topic_pattern "no-such-topic-.*"`) {
		t.Errorf("no matching topic: %v", err)
	}
}

func TestTopicPatternConfigErrors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"  topic: t\n  topic_pattern: 't.*'\n", "give topic or topic_pattern, not both"},
		{"  topic_pattern: 't(['\n", "topic_pattern is not a regular expression"},
		{"  format: RAW\n", "needs a topic (or a topic_pattern)"},
	} {
		got := buildErrors(t, "type: ReadFromKafka\nconfig:\n  bootstrap_servers: x:1\n  format: RAW\n"+strings.Replace(tt.config, "  format: RAW\n", "", 1))
		if !strings.Contains(got, tt.want) {
			t.Errorf("%q: got %s, want %q", tt.config, got, tt.want)
		}
	}
}

// A topic that comes to match topic_pattern after the pipeline ran is new to it: it is read
// from its start, whatever auto_offset_reset says.
func TestTopicPatternNewTopicFromStart(t *testing.T) {
	a := newTopic(t, 1)
	produce(t, a, 0, strs("a")...)
	b := a + "-new"
	if _, err := kadm.NewClient(testClient(t)).CreateTopic(context.Background(), 1, 1, nil, b); err != nil {
		t.Fatal(err)
	}
	produce(t, b, 0, strs("b0", "b1")...)
	cfg := fmt.Sprintf("  topic_pattern: '%s.*'\n  bootstrap_servers: %s\n  format: STRING\n  auto_offset_reset_config: latest\n", regexp.QuoteMeta(a), testBroker)
	_, out, _, err := readSource(t, cfg, schemas.Offsets{"kafka:" + a: {0: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	if !slices.Equal(got, []string{"b0", "b1"}) {
		t.Errorf("read %v, want the new topic's b0, b1", got)
	}
}
