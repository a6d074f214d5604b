package runner

import (
	"context"
	"sync"
	"time"
)

// asyncProgress writes progress in the background (options.async_progress_tracking, Spark's
// asyncProgressTrackingEnabled; at_least_once only). The coordinator hands it each epoch's
// progress and cuts the next epoch without waiting; it commits the newest progress at most
// once per interval, so commits that fall behind coalesce instead of piling up. After a crash
// the run resumes from the last progress written: what was delivered since is delivered again.
type asyncProgress struct {
	r        *run
	interval time.Duration
	wake     chan struct{}

	saving  sync.Mutex // held while a progress is saved
	mu      sync.Mutex // guards pending and err
	pending *progress
	err     error // a failed save: the run stops
}

func newAsyncProgress(r *run, interval time.Duration) *asyncProgress {
	return &asyncProgress{r: r, interval: interval, wake: make(chan struct{}, 1)}
}

// submit replaces the progress waiting to be saved with p.
func (a *asyncProgress) submit(p progress) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	if a.pending != nil { // p replaces it: what p commits starts with the oldest record of both
		p.oldest = mergeOldest(a.pending.oldest, p.oldest)
	}
	a.pending = &p
	select {
	case a.wake <- struct{}{}:
	default:
	}
	return nil
}

// run saves the newest progress at most once per interval until the coordinator is done.
func (a *asyncProgress) run(ctx context.Context) error {
	var last time.Time
	for {
		select {
		case <-a.wake:
		case <-a.r.finished:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		if wait := time.Until(last.Add(a.interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-a.r.finished:
				t.Stop()
				return nil // the coordinator saves what is left
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		if err := a.flush(ctx); err != nil {
			return err
		}
		last = time.Now()
	}
}

// flush saves the progress waiting, if any, now: at the end of the run, and before
// partitions are handed over to another copy.
func (a *asyncProgress) flush(ctx context.Context) error {
	a.saving.Lock()
	defer a.saving.Unlock()
	a.mu.Lock()
	p := a.pending
	a.pending = nil
	a.mu.Unlock()
	if p == nil {
		return nil
	}
	err := a.r.save(ctx, *p)
	if err != nil {
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
	}
	return err
}
