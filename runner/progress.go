package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// This file tells an operator where a run starts and how it goes (docs/operations.md,
// "Progress"): a line per source when it opens, saying where its partitions start and why; a
// progress line at INFO every RunConfig.ProgressInterval; and snapshots for a live display.

// Progress is a run's progress at one moment.
type Progress struct {
	// Elapsed is the time since the run opened.
	Elapsed time.Duration
	Sources []SourceProgress
	// Epochs is how many epochs were committed; LastCommit when the last sink committed last
	// (zero before the first commit).
	Epochs     int64
	LastCommit time.Time
}

// SourceProgress is one source's progress.
type SourceProgress struct {
	Name string
	// Read is how many records the run read; Rate how many per second since the previous
	// snapshot (over the whole run for the first).
	Read int64
	Rate float64
	// Lag is how many records are left in the partitions the source reads, -1 when the source
	// cannot say; LagSeconds the largest lag in seconds of its partitions (lag.go).
	Lag        int64
	LagSeconds float64
	// Backlog is, for a bounded run (--stop-at-end) of a source that says where it started
	// (component.Progress), how many records were there to read when it started, and Done how
	// many of them were read; both 0 otherwise.
	Backlog, Done int64
}

// Percent returns how much of the backlog was read, or -1 without a backlog.
func (p SourceProgress) Percent() float64 {
	if p.Backlog <= 0 {
		return -1
	}
	return 100 * float64(p.Done) / float64(p.Backlog)
}

// ETA returns how long reading the rest of the backlog takes at the current rate, or -1.
func (p SourceProgress) ETA() time.Duration {
	if p.Backlog <= 0 || p.Rate <= 0 {
		return -1
	}
	return time.Duration(float64(p.Backlog-p.Done) / p.Rate * float64(time.Second))
}

// progressNow returns the run's progress; rates are taken against prev (nil: since the start).
func (r *run) progressNow(prev *Progress) Progress {
	now := time.Now()
	p := Progress{Elapsed: now.Sub(r.started), Epochs: r.epochs.Load()}
	for _, k := range r.sinks {
		if at := k.lastCommit.Load(); at > 0 && time.Unix(0, at).After(p.LastCommit) {
			p.LastCommit = time.Unix(0, at)
		}
	}
	for i, s := range r.sources {
		sp := SourceProgress{Name: s.node.Name, Read: s.records.Load(), Lag: -1}
		read, since := sp.Read, p.Elapsed
		if prev != nil && i < len(prev.Sources) {
			read, since = sp.Read-prev.Sources[i].Read, p.Elapsed-prev.Elapsed
		}
		if since > 0 {
			sp.Rate = float64(read) / since.Seconds()
		}
		if lags := r.lag(s, now); lags != nil {
			sp.Lag = 0
			for _, l := range lags {
				sp.Lag += l.records
				sp.LagSeconds = max(sp.LagSeconds, l.seconds)
			}
		}
		if pr, ok := s.src.(component.Progress); ok && r.cfg.StopAtEnd {
			sp.Backlog, sp.Done = backlog(pr.Starts(), pr.Position())
		}
		p.Sources = append(p.Sources, sp)
	}
	return p
}

// backlog returns how many records lay between where the partitions started and where they
// ended then, and how many of them were read by pos.
func backlog(starts []component.Start, pos schemas.Offsets) (total, done int64) {
	for _, st := range starts {
		if st.End < 0 || st.End <= st.Offset {
			continue
		}
		total += st.End - st.Offset
		if next, ok := pos.Get(st.Source, st.Partition.Partition); ok {
			done += min(max(next-st.Offset, 0), st.End-st.Offset)
		}
	}
	return total, done
}

// liveEvery is how often RunConfig.Live is called.
const liveEvery = 500 * time.Millisecond

// reportProgress logs a progress line every ProgressInterval and calls Live every liveEvery,
// until the run is over.
func (r *run) reportProgress(ctx context.Context) {
	var logTick, liveTick <-chan time.Time
	if r.cfg.ProgressInterval > 0 {
		t := time.NewTicker(r.cfg.ProgressInterval)
		defer t.Stop()
		logTick = t.C
	}
	if r.cfg.Live != nil {
		t := time.NewTicker(liveEvery)
		defer t.Stop()
		liveTick = t.C
	}
	if logTick == nil && liveTick == nil {
		return
	}
	var lastLog, lastLive *Progress
	for {
		select {
		case <-logTick:
			p := r.progressNow(lastLog)
			r.log.Info("progress", p.attrs()...)
			lastLog = &p
		case <-liveTick:
			p := r.progressNow(lastLive)
			r.cfg.Live(p)
			lastLive = &p
		case <-r.finished:
			return
		case <-ctx.Done():
			return
		}
	}
}

// attrs are the progress line's attributes: one group per source, the epochs and the last
// commit.
func (p Progress) attrs() []any {
	var out []any
	for _, s := range p.Sources {
		a := []any{"read", s.Read, "per_second", round(s.Rate)}
		if s.Lag >= 0 {
			a = append(a, "lag", s.Lag, "lag_seconds", round(s.LagSeconds))
		}
		if pc := s.Percent(); pc >= 0 {
			a = append(a, "percent", round(pc))
			if eta := s.ETA(); eta >= 0 {
				a = append(a, "eta", eta.Round(time.Second).String())
			}
		}
		out = append(out, slog.Group("source_"+s.Name, a...))
	}
	out = append(out, "epochs_committed", p.Epochs)
	if p.LastCommit.IsZero() {
		out = append(out, "last_commit", "none yet")
	} else {
		out = append(out, "last_commit", p.LastCommit.UTC().Format(time.RFC3339), "last_commit_ago", time.Since(p.LastCommit).Round(time.Second).String())
	}
	return out
}

func round(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// logStart logs where a source that just opened starts, and why. A source that cannot say
// (no component.Progress) logs the checkpoint it resumes from, if any.
func (r *run) logStart(s *sourceState, from schemas.Offsets) {
	p, ok := s.src.(component.Progress)
	if !ok {
		if len(from) > 0 {
			r.log.Info("source starts at the last commit (the sinks' checkpoint)", "source", s.node.Name, "from", from.String())
		} else {
			r.log.Info("source starts at its beginning (no checkpoint)", "source", s.node.Name)
		}
		return
	}
	starts := p.Starts()
	if len(starts) == 0 {
		r.log.Info("source starts as partitions are assigned to it (consumer group): each where the sinks committed it, else at the group's offset, else at auto_offset_reset", "source", s.node.Name)
		return
	}
	why, at, backlog := component.DescribeStarts(starts)
	r.log.Info("where the source starts: "+why, "source", s.node.Name, "at", at, "backlog_records", backlog)
}
