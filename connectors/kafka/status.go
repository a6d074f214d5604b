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
	cl, err := s.set.newClient()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, CheckpointTopic)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: looking for the checkpoint topic %s: %w", s.what, CheckpointTopic, err)
	}
	if !topics.Has(CheckpointTopic) {
		return nil, time.Time{}, nil
	}
	base := checkpointKey(pipeline, s.name, "")
	all, times, err := readCheckpointsAt(ctx, s.set, adm, base)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	var at time.Time
	for _, t := range times {
		if t.After(at) {
			at = t
		}
	}
	return all.merged(base), at, nil
}
