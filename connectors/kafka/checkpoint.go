package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CheckpointTopic is the compacted topic in which WriteToKafka keeps the checkpoint of every
// sink, keyed by pipeline and sink name. It is created on first use with one partition.
const CheckpointTopic = "__sluice_checkpoints"

// checkpointKey is the record key of a sink's checkpoints: pipeline/sink, and with several
// copies of the pipeline in one consumer group, pipeline/sink@instance for each copy.
func checkpointKey(pipeline, sink, instance string) string {
	if instance == "" {
		return pipeline + "/" + sink
	}
	return pipeline + "/" + sink + "@" + instance
}

// sameSink reports whether key is a checkpoint key of the sink base (pipeline/sink), of any
// copy.
func sameSink(key, base string) bool {
	return key == base || strings.HasPrefix(key, base+"@")
}

// sinkCheckpoints are the checkpoints of one sink, from every copy of its pipeline.
type sinkCheckpoints map[string]*component.Checkpoint // key -> its last checkpoint

// merged returns the checkpoint of key with, per partition, the highest offset any copy
// committed, or nil when no copy has one. That is the partition's last commit: each copy
// records only the offsets it moved and keeps them after handing the partition over
// (Commit.OwnRecord), and a partition's offsets grow from owner to owner.
func (c sinkCheckpoints) merged(key string) *component.Checkpoint {
	var out *component.Checkpoint
	for _, k := range slices.Sorted(maps.Keys(c)) {
		cp := c[k]
		if cp == nil {
			continue
		}
		if out == nil {
			out = &component.Checkpoint{Pipeline: cp.Pipeline, Next: schemas.Offsets{}}
		}
		out.Next.Advance(cp.Next)
	}
	if own := c[key]; own != nil {
		out.Epoch, out.State, out.Lineage = own.Epoch, own.State, own.Lineage
	}
	return out
}

// checkpointWait bounds how long Open waits for the checkpoint topic to become readable up to
// its end: a transaction of another sink that is open there holds back what read_committed
// readers see until it ends (Kafka aborts it after its transaction timeout at the latest).
var checkpointWait = maxTxnTimeout + time.Minute // a crashed writer's open transaction times out first

// ensureCheckpointTopic creates the checkpoint topic if it does not exist.
func ensureCheckpointTopic(ctx context.Context, adm *kadm.Client) error {
	_, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, CheckpointTopic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating the checkpoint topic %s: %w", CheckpointTopic, err)
	}
	return nil
}

// checkpointRecord is the record that commits cp for key.
func checkpointRecord(key string, cp component.Checkpoint) (*kgo.Record, error) {
	value, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encoding the checkpoint of epoch %d: %w", cp.Epoch, err)
	}
	return &kgo.Record{Topic: CheckpointTopic, Key: []byte(key), Value: value}, nil
}

// readCheckpoints returns the last committed checkpoint of every copy of the sink base
// (readLatest).
func readCheckpoints(ctx context.Context, set *settings, adm *kadm.Client, base string) (sinkCheckpoints, error) {
	stored, err := readLatest(ctx, set, adm, base)
	if err != nil {
		return nil, err
	}
	return decodeCheckpoints(stored)
}

// decodeCheckpoints decodes the checkpoints of the stored values, by key.
func decodeCheckpoints(stored map[string]component.Stored) (sinkCheckpoints, error) {
	out := sinkCheckpoints{}
	for key, v := range stored {
		cp := new(component.Checkpoint)
		if err := json.Unmarshal(v.Value, cp); err != nil {
			return nil, fmt.Errorf("the checkpoint of %s in %s is not a sluice checkpoint: %w", key, CheckpointTopic, err)
		}
		out[key] = cp
	}
	return out, nil
}

// readLatest returns the last value of every key of the checkpoint topic that names the sink
// base or one of its copies, without those whose last record is a tombstone, and when each
// was written. It reads every partition with read_committed from its start up to the high
// watermark it has when the read begins, so it also waits for transactions open at that
// moment to end: with the writer of a key fenced first, the value it returns for that key is
// the last one ever committed.
func readLatest(ctx context.Context, set *settings, adm *kadm.Client, base string) (map[string]component.Stored, error) {
	ctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	last := map[string]component.Stored{}
	err := readCommittedTo(ctx, set, adm, CheckpointTopic, adm.ListEndOffsets, func(r *kgo.Record) bool {
		key := string(r.Key)
		switch {
		case r.Attrs.IsControl() || !sameSink(key, base):
		case r.Value == nil:
			delete(last, key)
		default:
			last[key] = component.Stored{Value: r.Value, At: r.Timestamp}
		}
		return false
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (is a transaction of another writer open there?)", err)
		}
		return nil, fmt.Errorf("reading the checkpoint topic %s: %w", CheckpointTopic, err)
	}
	return last, nil
}

// readCommittedTo reads topic with read_committed, transaction markers included, from each
// partition's start up to the offset that ends lists for it when the read begins (the high
// watermark, or the last stable offset), and calls each with every record; each returns true
// to stop there.
func readCommittedTo(ctx context.Context, set *settings, adm *kadm.Client, topic string,
	ends func(context.Context, ...string) (kadm.ListedOffsets, error), each func(*kgo.Record) bool) error {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	var to kadm.ListedOffsets
	if err == nil {
		to, err = ends(ctx, topic)
	}
	if err == nil {
		err = to.Error()
	}
	if err != nil {
		return fmt.Errorf("listing the offsets of topic %s: %w", topic, err)
	}
	pending := map[int32]int64{} // partition -> where it is read to, until read up to it
	assign := map[int32]kgo.Offset{}
	to.Each(func(o kadm.ListedOffset) {
		if start, _ := starts.Lookup(o.Topic, o.Partition); o.Offset > start.Offset {
			pending[o.Partition] = o.Offset
			assign[o.Partition] = kgo.NewOffset().At(start.Offset)
		}
	})
	if len(pending) == 0 {
		return nil
	}
	cl, err := set.newClient(kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(pending) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading topic %s up to its end: %w", topic, err)
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("reading topic %s partition %d: %w", topic, e.Partition, e.Err)
		}
		stop := false
		fs.EachRecord(func(r *kgo.Record) {
			if stop {
				return
			}
			end, ok := pending[r.Partition]
			if !ok || r.Offset >= end {
				delete(pending, r.Partition)
				return
			}
			if r.Offset+1 >= end {
				delete(pending, r.Partition)
			}
			stop = each(r)
		})
		if stop {
			return nil
		}
	}
	return nil
}
