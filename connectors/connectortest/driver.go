package connectortest

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Driver drives a sink the way the runner does, for tests: every lane flushes an epoch, then
// Commit gets a checkpoint whose next offset for partition 0 of Source is the number of
// records written so far (record i is at offset i).
type Driver struct {
	T        testing.TB
	Pipeline string
	Lanes    int
	Source   string
}

// Flush has every lane flush epoch.
func (d Driver) Flush(s component.Sink, epoch uint64) {
	d.T.Helper()
	for l := range d.Lanes {
		if err := s.Writer(l).Flush(context.Background(), epoch); err != nil {
			d.T.Fatalf("flush epoch %d: %v", epoch, err)
		}
	}
}

// Checkpoint is the commit of epoch after next records.
func (d Driver) Checkpoint(epoch uint64, next int) component.Commit {
	return component.Commit{Checkpoint: component.Checkpoint{Pipeline: d.Pipeline, Epoch: epoch, Next: schemas.Offsets{d.Source: {0: int64(next)}}}}
}

// Commit commits epoch with the checkpoint after next records.
func (d Driver) Commit(s component.Sink, epoch uint64, next int) {
	d.T.Helper()
	if err := s.Commit(context.Background(), d.Checkpoint(epoch, next)); err != nil {
		d.T.Fatalf("commit epoch %d: %v", epoch, err)
	}
}
