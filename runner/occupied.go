package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/component"
)

// This file is lost state made loud (docs/operations.md, "A sink without its checkpoint"): a
// sink with no checkpoint of the pipeline starts afresh only on an empty target.

// checkEmpty refuses a sink that has no checkpoint of the pipeline but whose target holds data
// (component.Occupied), unless RunConfig.AllowResetState: its checkpoint may have been lost,
// and starting afresh would write again what the pipeline wrote. It returns the sink when the
// run goes on with it, to Claim its target once the sources' start is known.
func (r *run) checkEmpty(ctx context.Context, k *sinkState, shared bool) (component.Occupied, error) {
	o, ok := k.sink.(component.Occupied)
	if !ok {
		return nil, nil
	}
	holds, err := o.Holds(ctx)
	if err == nil && holds != "" && shared {
		// Another copy starting at the same time may have written its first rows, and not
		// yet its checkpoint (at_least_once writes rows first): ask again after two epochs.
		select {
		case <-time.After(min(max(2*r.plan.EpochInterval, time.Second), 10*time.Second)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		holds, err = o.Holds(ctx)
	}
	if err != nil {
		return nil, k.node.InStage(fmt.Errorf("checking whether its target is empty: %w", err))
	}
	if holds != "" && !r.cfg.AllowResetState {
		return nil, r.refuseOccupied(k, holds)
	}
	if holds != "" {
		r.log.Warn("starting without a checkpoint on a target that holds data (--allow-reset-state): sources start at their default position", "sink", k.node.Name, "target", holds)
	}
	return o, nil
}

// refuseOccupied is the error of a sink without a checkpoint whose target holds data.
func (r *run) refuseOccupied(k *sinkState, holds string) error {
	return fmt.Errorf("%s (%s) has no checkpoint of pipeline %q, but %s. If this pipeline wrote it, its checkpoint was lost and running would write it again: restore the checkpoint, or give the pipeline another name (options.name, or --name for any file or template) or the sink another target. "+
		"If the data is not this pipeline's, or writing it again is what you want, run with --allow-reset-state: sources start at their default position",
		k.node.Describe(), k.node.Pos, r.plan.Options.Name, holds)
}
