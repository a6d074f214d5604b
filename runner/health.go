package runner

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Health tells an orchestrator whether a run is alive and ready (sluice run's /healthz and
// /readyz, docs/operations.md). The caller makes one, hands it to Execute in RunConfig and asks
// it from any goroutine. A run that never started is alive (it is starting, and exits by
// itself when --startup-timeout runs out) and not ready.
type Health struct {
	mu      sync.Mutex
	now     func() time.Time
	phase   string        // what the run is doing, for a not-ready answer
	ready   bool          // sources and sinks opened, checkpoints read, not stopping
	looped  time.Time     // when the coordinator last came round its loop; zero before it starts
	allowed time.Duration // how long the loop may stay away before the run is not alive
}

// NewHealth returns the health of a run that has not started (its pipeline may be loading).
func NewHealth() *Health {
	return &Health{now: time.Now, phase: "starting"}
}

// minStall is the least time the epoch loop may stay away before the run counts as stuck: a
// commit that retries through a short outage, or a slow catalog, is not a reason to restart.
const minStall = time.Minute

// Live returns nil while the run's epoch loop comes round: every epoch interval, whether or not
// it cuts an epoch. A loop stuck for max(3 intervals, 1 minute) (a commit or a lane that does not
// return) makes it an error that says since when. Before the loop starts, the run is alive.
func (h *Health) Live() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.looped.IsZero() {
		return nil
	}
	if away := h.now().Sub(h.looped); away > h.allowed {
		return fmt.Errorf("the epoch loop has not come round for %v (allowed %v): a commit or a transform does not return", away.Round(time.Second), h.allowed)
	}
	return nil
}

// Ready returns nil once the run has opened its sinks and sources and read their checkpoints,
// until it starts to stop; else an error saying what it is doing.
func (h *Health) Ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready {
		return nil
	}
	return errors.New(h.phase)
}

// setPhase records what a run that is not ready is doing.
func (h *Health) setPhase(phase string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.phase, h.ready = phase, false
}

// started marks the run ready and its epoch loop running, one epoch interval long.
func (h *Health) started(interval time.Duration) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ready, h.looped, h.allowed = true, h.now(), max(3*interval, minStall)
}

// loop records that the epoch loop came round.
func (h *Health) loop() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.looped = h.now()
}
