package runner

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// This file measures how far behind the sources are (sluice_source_lag_*, the progress lines;
// docs/operations.md): a source that can say where its partitions end (component.EndOffsets)
// and where it is (component.Progress) is asked for its ends every few seconds off the data
// path; the lag is computed when it is read. The lag in seconds is the age of the last record
// read from the partition (now - its time) while the partition has records left to read, and 0
// once it has none: the age of the head of the partition as this run sees it.

// heads keeps the time of the last record read from every partition of a source.
type heads struct {
	mu   sync.Mutex
	last map[component.Partition]time.Time
}

func (h *heads) set(p component.Partition, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil {
		h.last = map[component.Partition]time.Time{}
	}
	h.last[p] = at
}

func (h *heads) get(p component.Partition) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.last[p]
	return at, ok
}

// note accounts for a batch the reader is about to send: its bytes, the time of its last
// record (the partition's head) and, for freshness, the oldest record time of the epoch. It
// costs a few operations per batch, on the reader's goroutine.
func (s *sourceState) note(b *schemas.Batch) {
	if b.Raw != nil {
		n := 0
		for _, raw := range b.Raw {
			n += len(raw)
		}
		s.bytes.Add(int64(n))
	}
	if len(b.Time) == 0 || b.Time[0].IsZero() {
		return
	}
	// A partition's records come roughly in time order: the first of a batch stands for its
	// oldest, and comparing one time per batch keeps this cheap.
	if first := b.Time[0]; s.oldest.IsZero() || first.Before(s.oldest) {
		s.oldest = first
	}
	s.heads.set(component.Partition{Source: b.Pos[0].Source, Partition: b.Pos[0].Partition}, b.Time[len(b.Time)-1])
}

// ends holds the sources' partition ends as last polled.
type ends struct {
	mu sync.Mutex
	of map[*sourceState]schemas.Offsets
}

func (e *ends) get(s *sourceState) schemas.Offsets {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.of[s]
}

func (e *ends) set(s *sourceState, o schemas.Offsets) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.of == nil {
		e.of = map[*sourceState]schemas.Offsets{}
	}
	e.of[s] = o
}

// Bounds of how often the ends are polled: the epoch interval, within these.
const (
	minEndsPoll = 250 * time.Millisecond
	maxEndsPoll = 10 * time.Second
	endsTimeout = 10 * time.Second
)

// lagged returns the sources whose lag can be measured.
func (r *run) lagged() []*sourceState {
	var out []*sourceState
	for _, s := range r.sources {
		_, ends := s.src.(component.EndOffsets)
		_, pos := s.src.(component.Progress)
		if ends && pos {
			out = append(out, s)
		}
	}
	return out
}

// pollEnds asks the sources where their partitions end, at once and then every epoch interval
// (within minEndsPoll and maxEndsPoll; at least every second for a live display), until the
// run is over. A failure is logged at debug level and the last ends kept: the lag is a view,
// not a reason to stop.
func (r *run) pollEnds(ctx context.Context) {
	sources := r.lagged()
	if len(sources) == 0 || (r.cfg.Metrics == nil && r.cfg.ProgressInterval <= 0 && r.cfg.Live == nil) {
		return
	}
	// A poll in progress when the run ends (a broker that does not answer) must not hold it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.finished:
			cancel()
		case <-ctx.Done():
		}
	}()
	every := min(max(r.plan.EpochInterval, minEndsPoll), maxEndsPoll)
	if r.cfg.Live != nil {
		every = min(every, time.Second)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, s := range sources {
			pctx, cancel := context.WithTimeout(ctx, endsTimeout)
			o, err := s.src.(component.EndOffsets).EndOffsets(pctx)
			cancel()
			if err != nil {
				r.log.Debug("asking where the partitions end failed; the lag shown is older", "source", s.node.Name, "err", err)
				continue
			}
			r.ends.set(s, o)
		}
		select {
		case <-t.C:
		case <-r.finished:
			return
		case <-ctx.Done():
			return
		}
	}
}

// partitionLag is how far one partition is behind its end.
type partitionLag struct {
	component.Partition
	records int64
	seconds float64 // valid when known
	known   bool    // seconds is known: no records left, or a record was read in this run
}

// lag returns the lag of every partition of s that it reads and whose end is known.
func (r *run) lag(s *sourceState, now time.Time) []partitionLag {
	p, ok := s.src.(component.Progress)
	ends := r.ends.get(s)
	if !ok || ends == nil {
		return nil
	}
	var out []partitionLag
	for src, parts := range p.Position() {
		for part, next := range parts {
			end, ok := ends.Get(src, part)
			if !ok {
				continue
			}
			l := partitionLag{Partition: component.Partition{Source: src, Partition: part}, records: max(end-next, 0)}
			if l.records == 0 {
				l.known = true
			} else if at, ok := s.heads.get(l.Partition); ok {
				l.seconds, l.known = max(now.Sub(at).Seconds(), 0), true
			}
			out = append(out, l)
		}
	}
	return out
}

// instrument hands the components with metrics of their own the run's registry.
func (r *run) instrument() {
	for _, n := range r.plan.Nodes {
		in, ok := n.Impl.(component.Instrumented)
		if !ok {
			continue
		}
		labels := prometheus.Labels{"pipeline": r.plan.Options.Name}
		if r.bySource[n] != nil {
			labels["source"] = n.Name
		} else {
			labels["sink"] = n.Name
		}
		in.Instrument(r.cfg.Metrics, labels)
	}
}

// oldestFor returns the oldest record time p commits to sink k: over the sources upstream of it.
func (p progress) oldestFor(k *sinkState) time.Time {
	var out time.Time
	for _, s := range k.sources {
		if at, ok := p.oldest[s]; ok && (out.IsZero() || at.Before(out)) {
			out = at
		}
	}
	return out
}

// mergeOldest returns, per source, the older time of a and b.
func mergeOldest(a, b map[*sourceState]time.Time) map[*sourceState]time.Time {
	out := make(map[*sourceState]time.Time, len(b))
	for s, at := range b {
		out[s] = at
	}
	for s, at := range a {
		if cur, ok := out[s]; !ok || at.Before(cur) {
			out[s] = at
		}
	}
	return out
}
