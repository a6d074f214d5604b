package runner

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// epochTrace times the phases of one epoch, from the barrier request to the end of its
// commit: where an output record waits between being read and becoming visible. The run logs
// it at debug level with each "epoch committed" line and observes it in
// sluice_epoch_phase_seconds.
//
//	wait   the previous epoch's round ended .. this barrier was requested (the trigger)
//	cut    barrier requested .. every source answered it (a Read in progress returns)
//	align  every source answered .. every lane passed the barrier: the lanes work off what
//	       was queued before it, then flush their sink writers
//	flush  the slowest lane's flush of its sink writers (within align)
//	commit the sinks' commits, in parallel: the slowest
//	ack    the sources that hear committed offsets (consumer-group commits)
type epochTrace struct {
	wait, cut, align, flush, commit, ack time.Duration
}

// The phases of epochTrace, as sluice_epoch_phase_seconds labels them.
var epochPhases = []string{"wait", "cut", "align", "flush", "commit", "ack"}

func (t *epochTrace) durations() []time.Duration {
	return []time.Duration{t.wait, t.cut, t.align, t.flush, t.commit, t.ack}
}

// attrs are the trace's log attributes, in milliseconds.
func (t *epochTrace) attrs() []any {
	out := make([]any, 0, 2*len(epochPhases))
	for i, d := range t.durations() {
		out = append(out, slog.Float64(epochPhases[i]+"_ms", float64(d.Microseconds())/1000))
	}
	return out
}

func newPhaseHistogram(pipeline prometheus.Labels) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "sluice_epoch_phase_seconds",
		Help:        "How long each phase of an epoch took: wait (for the trigger), cut (the sources answer the barrier), align (the lanes reach it and flush), flush (the slowest lane's flush), commit (the slowest sink), ack (sources hear the commit).",
		ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 0.1 ms to 13 s
	}, []string{"phase"})
}

// observe records the trace of a committed epoch.
func (m *metrics) observe(t *epochTrace) {
	for i, d := range t.durations() {
		m.epochPhases.WithLabelValues(epochPhases[i]).Observe(d.Seconds())
	}
}
