package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file is the repartition topic of a grouping across copies of a pipeline
// (docs/scaling.md): the runner writes the grouping's input rows to it keyed by the grouping
// key, exactly once and with the offsets of the source upstream in the same transaction, and
// reads them back in a consumer group of its own, so that all rows of a key meet in one copy.

// RepartitionSchema is the rows the repartition sink writes: the record's key (the grouping
// key, which picks the partition) and its value, both encoded by the runner.
var RepartitionSchema = schemas.New(
	schemas.Field{Name: "key", Type: schemas.Type{Kind: schemas.Bytes}},
	schemas.Field{Name: "value", Type: schemas.Type{Kind: schemas.Bytes}})

// SourceName is the Position.Source of the records of topic.
func SourceName(topic string) string { return sourceName(topic) }

// RepartitionGroup is the consumer group that reads a repartition topic for a source of group.
func RepartitionGroup(group string) string { return group + "-repartition" }

// Repartition returns the two ends of repartition topic topic for the grouping named name,
// fed by upstream, a ReadFromKafka in a consumer group: a sink of RepartitionSchema rows and a
// source of RAW rows that reads the topic read_committed in RepartitionGroup. The sink creates
// the topic when it opens, with partitions partitions (0: as many as upstream's topic with
// the most). Both use upstream's connection (bootstrap servers, TLS, SASL).
func Repartition(upstream component.Source, topic string, partitions int, name string) (component.Sink, component.Source, error) {
	up, ok := upstream.(*source)
	if !ok || up.set.group == "" {
		return nil, nil, errors.New("a repartition topic needs a ReadFromKafka with group.id upstream")
	}
	what := fmt.Sprintf("the repartition topic %s of %s", topic, name)
	wset := producerSettings(up.set)
	k := &sink{what: what, name: name + "/repartition", topic: topic, set: wset, input: RepartitionSchema,
		exactly: true, keyOf: func(row schemas.Row) (any, error) { return row[0], nil },
		format: formats.Writing{NewEncoder: func() formats.Encoder { return appendValueField }},
		create: &topicSpec{partitions: int32(partitions), like: up.topics}}
	rset := *up.set
	rset.group, rset.reset, rset.readCommitted, rset.autoCreate = RepartitionGroup(up.set.group), "earliest", true, false
	raw := formats.Reading{Schema: rawRow, NewDecoder: func() formats.Decoder {
		return func(v []byte) (schemas.Row, error) { return schemas.Row{v}, nil }
	}}
	src := &repartitionSource{newSource(what, []string{topic}, &rset, raw, nil)}
	return k, src, nil
}

var rawRow = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})

// appendValueField encodes a RepartitionSchema row: its value, as it is.
func appendValueField(dst []byte, _ *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
	v, ok := row[1].([]byte)
	if !ok {
		return dst, false, fmt.Errorf("a repartition record's value is a %T, not bytes", row[1])
	}
	return append(dst, v...), false, nil
}

// producerSettings returns the settings of a producer with the connection of a consumer's.
func producerSettings(consumer *settings) *settings {
	set := newSettings()
	set.bootstrap, set.clientID, set.security, set.metrics = consumer.bootstrap, consumer.clientID, consumer.security, consumer.metrics
	return set
}

// topicSpec is a topic a sink creates when it opens: with partitions partitions, or as many
// as the topic of like with the most.
type topicSpec struct {
	partitions int32
	like       []string
}

// ensure creates topic unless it exists. Its records are deleted by the broker's retention
// (retention.ms, 7 days by default): it must outlast the longest stop of the pipeline.
func (t *topicSpec) ensure(ctx context.Context, set *settings, cl *kgo.Client, topic string) error {
	n := t.partitions
	if n <= 0 {
		counts, err := partitionCounts(ctx, set, cl, t.like, false)
		if err != nil {
			return err
		}
		for _, c := range counts {
			n = max(n, c)
		}
	}
	_, err := kadm.NewClient(cl).CreateTopic(ctx, n, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating the repartition topic %s with %d partitions: %w", topic, n, err)
	}
	return nil
}

// repartitionSource reads a repartition topic back.
type repartitionSource struct{ *source }

// EndNow makes Read end once every partition reached its end as of now: the records the
// upstream part of the run committed before it ended. A transaction that another copy left
// open (it was killed) holds the partition's last stable offset back, and what other copies
// committed after it would be cut off: EndNow waits until no transaction is open (Kafka aborts
// a dead producer's after its transaction timeout).
func (s repartitionSource) EndNow(ctx context.Context) error {
	s.mu.Lock()
	adm := s.adm
	s.mu.Unlock()
	if adm == nil {
		return fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	for logged := false; ; {
		stable, err := adm.ListCommittedOffsets(ctx, s.topics...)
		if err == nil {
			err = stable.Error()
		}
		var hwms kadm.ListedOffsets
		if err == nil {
			if hwms, err = adm.ListEndOffsets(ctx, s.topics...); err == nil {
				err = hwms.Error()
			}
		}
		if err != nil {
			return fmt.Errorf("%s: listing the end offsets: %w", s.what, err)
		}
		open := 0
		stable.Each(func(o kadm.ListedOffset) {
			if h, ok := hwms.Lookup(o.Topic, o.Partition); ok && h.Offset > o.Offset {
				open++
			}
		})
		if open == 0 {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.ends = schemas.Offsets{}
			stable.Each(func(o kadm.ListedOffset) { s.ends.Set(sourceName(o.Topic), o.Partition, o.Offset) })
			return nil
		}
		if !logged {
			slog.Info("waiting for open transactions on the repartition topic to end before reading it to its end (a copy that was killed left them; Kafka aborts them after their transaction timeout)",
				"component", s.what, "partitions", open)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
