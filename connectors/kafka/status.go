package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/twmb/franz-go/pkg/kadm"
)

// ReadCheckpoint returns the sink's last checkpoint of pipeline in the checkpoint topic,
// merged over the copies of the pipeline, and the time of its newest record. It only reads:
// no producer is fenced and no topic created.
func (s *sink) ReadCheckpoint(ctx context.Context, pipeline string) (*component.Checkpoint, time.Time, error) {
	base := checkpointKey(pipeline, s.name, "")
	stored, err := readStored(ctx, s.set, base)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	all, err := decodeCheckpoints(stored)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	var at time.Time
	for _, v := range stored {
		if v.At.After(at) {
			at = v.At
		}
	}
	return all.merged(base), at, nil
}

// readStored is readLatest for a reader that only reads: no producer is fenced and no topic
// created (without the checkpoint topic there is nothing).
func readStored(ctx context.Context, set *settings, base string) (map[string]component.Stored, error) {
	cl, err := set.newClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, CheckpointTopic)
	if err != nil {
		return nil, fmt.Errorf("looking for the checkpoint topic %s: %w", CheckpointTopic, err)
	}
	if !topics.Has(CheckpointTopic) {
		return map[string]component.Stored{}, nil
	}
	return readLatest(ctx, set, adm, base)
}
