package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/component"
)

// This file is the run's patience at start: a broker, registry or catalog that is not up yet
// (all services of a deployment start together) is waited for, up to RunConfig.StartupTimeout,
// instead of failing the run at once.

// startupBackoff bounds the wait between two attempts to open a component.
const (
	startupFirstWait = 250 * time.Millisecond
	startupMaxWait   = 5 * time.Second
)

// openRetrying calls open until it succeeds, fails for another reason than an unreachable
// service (component.Unreachable), or the startup timeout passes; what names the component
// for the log and the error.
func (r *run) openRetrying(ctx context.Context, what string, open func() error) error {
	deadline := time.Now().Add(r.cfg.StartupTimeout)
	wait := startupFirstWait
	for attempt := 1; ; attempt++ {
		err := open()
		if err == nil || !component.Unreachable(err) || r.cfg.StartupTimeout <= 0 {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w; still unreachable after %d attempts in %v (--startup-timeout)", err, attempt, r.cfg.StartupTimeout)
		}
		if attempt == 1 {
			r.log.Warn("cannot reach a service that "+what+" needs; trying again for up to "+r.cfg.StartupTimeout.String()+" (--startup-timeout)",
				"component", what, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return err
		case <-r.cfg.Stop:
			return err
		case <-time.After(min(wait, left)):
		}
		wait = min(2*wait, startupMaxWait)
	}
}
