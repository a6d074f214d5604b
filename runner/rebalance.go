package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// This file is the run's side of consumer-group rebalances (docs/scaling.md): a grouped
// source reports partitions moving in and out, and the run re-reads the sinks' checkpoints for
// partitions it gains and commits everything read from partitions it gives up before they go.

// rebalancer is the component.Rebalancer the run gives one grouped source.
type rebalancer struct {
	r *run
	s *sourceState
}

// revokeRequest asks the coordinator for a barrier round now, after which the source's
// partitions are forgotten; done is closed when that is done.
type revokeRequest struct {
	s     *sourceState
	parts []component.Partition
	done  chan struct{}
}

func (b rebalancer) Assigned(ctx context.Context, parts []component.Partition) (schemas.Offsets, error) {
	return b.r.assigned(ctx, b.s, parts)
}

func (b rebalancer) Revoked(ctx context.Context, parts []component.Partition) error {
	req := revokeRequest{s: b.s, parts: parts, done: make(chan struct{})}
	select {
	case b.r.revokes <- req:
	case <-b.r.finished:
		return nil // the run is over: everything it will ever commit is committed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-req.done:
		return nil
	case <-b.r.finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b rebalancer) Lost(parts []component.Partition, cause error) {
	why := "its consumer group session expired"
	if cause != nil {
		why = cause.Error()
	}
	err := fmt.Errorf("%s (%s): lost partitions %v without handing them over (%s); stopping without committing what was read of them since the last commit: the next run resumes from there",
		b.s.node.Describe(), b.s.node.Pos, parts, why)
	b.r.lost.CompareAndSwap(nil, &err)
	b.r.poke()
}

// lostErr returns the error of partitions lost during the run, if any.
func (r *run) lostErr() error {
	if e := r.lost.Load(); e != nil {
		return *e
	}
	return nil
}

// grouped returns the sources that share their partitions with other copies of the pipeline.
func (r *run) grouped() []*sourceState {
	var out []*sourceState
	for _, s := range r.sources {
		if g, ok := s.src.(component.Grouped); ok && g.Group() != "" {
			out = append(out, s)
		}
	}
	return out
}

// prepareGroups checks that every sink of a grouped source can be shared by several copies,
// hands the sources their rebalancer, and returns the name of this copy.
func (r *run) prepareGroups() (string, error) {
	grouped := r.grouped()
	if len(grouped) == 0 {
		return r.cfg.Instance, nil
	}
	var errs []error
	for _, s := range grouped {
		for _, k := range s.sinks {
			if _, ok := k.sink.(component.Reloader); !ok {
				errs = append(errs, fmt.Errorf("%s (%s) cannot be written by several copies of the pipeline, but %s (%s) reads in consumer group %q: give it no group.id, or write to a sink that can be shared",
					k.node.Describe(), k.node.Pos, s.node.Describe(), s.node.Pos, s.src.(component.Grouped).Group()))
			}
		}
		for _, n := range r.state.nodes {
			if slices.Contains(r.state.sources[n], s) {
				if err := r.checkSplit(n, s); err != nil {
					errs = append(errs, err)
				}
			}
		}
		s.src.(component.Grouped).SetRebalancer(rebalancer{r: r, s: s})
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	if r.cfg.Instance != "" {
		return r.cfg.Instance, nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "", fmt.Errorf("naming this copy of the pipeline: no host name (%v): pass --instance", err)
	}
	return host, nil
}

// assigned reads the checkpoints of the source's sinks again for parts, makes the sinks
// expect them (what they drop, what their next commit starts from) and returns where the
// partitions start: the smallest offset over the sinks that have a checkpoint, as at Open.
func (r *run) assigned(ctx context.Context, s *sourceState, parts []component.Partition) (schemas.Offsets, error) {
	if err := r.adoptTasks(ctx, s, parts); err != nil {
		r.log.Warn("reading the window state of newly assigned partitions failed", "err", err)
		return nil, err
	}
	windows := r.windowParts(s, parts)
	var restored []schemas.Offsets
	for _, k := range s.sinks {
		cp, err := k.sink.(component.Reloader).Reload(ctx)
		if err != nil {
			r.log.Warn("reading a sink's checkpoint for newly assigned partitions failed", "sink", k.node.Name, "err", err)
			return nil, k.node.InStage(fmt.Errorf("reading its checkpoint for newly assigned partitions: %w", err))
		}
		got := schemas.Offsets{}
		if cp != nil {
			// Every partition of the sources concerned: the source starts a partition the
			// sinks know the source of but not the partition at its beginning (it is new).
			for _, p := range parts {
				if m := cp.Next[p.Source]; m != nil {
					got[p.Source] = maps.Clone(m)
				}
			}
			restored = append(restored, got.Clone())
			for _, w := range windows {
				if v, ok := cp.Next.Get(w.Source, w.Partition); ok {
					got.Set(w.Source, w.Partition, v)
				}
			}
		}
		k.reassign(append(slices.Clone(parts), windows...), got)
	}
	s.unrevoke(parts)
	from := schemas.Offsets{}
	if len(restored) > 0 {
		from = schemas.Min(restored...)
	}
	r.log.Info("partitions assigned", "source", s.node.Name, "partitions", fmt.Sprint(parts), "from", from.String())
	return from, nil
}

// revoke runs on the coordinator after the barrier round of req: what the source read from the
// partitions is committed, so the run forgets them.
func (r *run) revoke(req revokeRequest) {
	req.s.markRevoked(req.parts)
	windows := r.windowParts(req.s, req.parts)
	for _, k := range req.s.sinks {
		k.reassign(append(slices.Clone(req.parts), windows...), nil)
	}
	r.revokeTasks(req.s, req.parts)
	r.log.Info("partitions handed over", "source", req.s.node.Name, "partitions", fmt.Sprint(req.parts))
	close(req.done)
}

// revokedSet is the partitions a source gave up, which its barrier reports leave out.
type revokedSet struct {
	mu    sync.Mutex
	parts map[component.Partition]bool
}

func (s *sourceState) markRevoked(parts []component.Partition) {
	s.revoked.mu.Lock()
	defer s.revoked.mu.Unlock()
	if s.revoked.parts == nil {
		s.revoked.parts = map[component.Partition]bool{}
	}
	for _, p := range parts {
		s.revoked.parts[p] = true
	}
}

func (s *sourceState) unrevoke(parts []component.Partition) {
	s.revoked.mu.Lock()
	defer s.revoked.mu.Unlock()
	for _, p := range parts {
		delete(s.revoked.parts, p)
	}
}

// withoutRevoked drops the partitions the source gave up from offsets.
func (s *sourceState) withoutRevoked(offsets schemas.Offsets) schemas.Offsets {
	s.revoked.mu.Lock()
	defer s.revoked.mu.Unlock()
	for p := range s.revoked.parts {
		offsets.Delete(p.Source, p.Partition)
	}
	return offsets
}

// reassign sets what the sink holds of parts: their offsets in at, or nothing for those
// missing from it (nil: forget them all).
func (k *sinkState) reassign(parts []component.Partition, at schemas.Offsets) {
	k.mu.Lock()
	defer k.mu.Unlock()
	covered := k.covered.Load().Clone()
	for _, p := range parts {
		if v, ok := at.Get(p.Source, p.Partition); ok {
			k.next.Set(p.Source, p.Partition, v)
			covered.Set(p.Source, p.Partition, v)
		} else {
			k.next.Delete(p.Source, p.Partition)
			covered.Delete(p.Source, p.Partition)
		}
	}
	k.covered.Store(&covered)
}

// fences returns, for every grouped source of the sink, its membership and the offsets it
// reached at the barrier (component.GroupFence).
func fences(k *sinkState, next map[*sourceState]schemas.Offsets) []component.GroupFence {
	var out []component.GroupFence
	for _, s := range k.sources {
		g, ok := s.src.(component.Grouped)
		if !ok || g.Group() == "" || len(next[s]) == 0 {
			continue
		}
		id, gen := g.Member()
		out = append(out, component.GroupFence{Group: g.Group(), MemberID: id, Generation: gen, Offsets: next[s]})
	}
	return out
}
