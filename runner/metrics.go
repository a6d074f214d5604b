package runner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/component"
)

// metrics exposes a run's progress to Prometheus. Counts are read from the run's own counters
// when scraped, so the data path pays nothing for them; commit latency is observed per commit.
type metrics struct {
	r *run

	read, written, skipped, errorRows, epochs, lastCommit *prometheus.Desc
	stateBytes, lateRecords                               *prometheus.Desc
	commitSeconds                                         *prometheus.HistogramVec
}

func newMetrics(r *run) *metrics {
	pipeline := prometheus.Labels{"pipeline": r.plan.Options.Name}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("sluice_"+name, help, labels, pipeline)
	}
	return &metrics{
		r:           r,
		read:        desc("records_read_total", "Records read from the sources.", "source"),
		written:     desc("rows_written_total", "Rows handed to the sink (committed with the next epoch).", "sink"),
		skipped:     desc("rows_skipped_total", "Rows the sink's checkpoint already held, dropped after a restart.", "sink"),
		errorRows:   desc("error_rows_total", "Records sent to error outputs."),
		epochs:      desc("epochs_committed_total", "Epochs committed by every sink."),
		lastCommit:  desc("last_commit_timestamp_seconds", "When the sink last committed (Unix time).", "sink"),
		stateBytes:  desc("state_bytes", "Window state a stateful transform holds (an estimate).", "transform"),
		lateRecords: desc("late_records_total", "Records that came after their windows had fired (dropped, or sent to the error output).", "transform"),
		commitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sluice_commit_duration_seconds", Help: "How long a sink's commit of an epoch took.",
			ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"sink"}),
	}
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.read, m.written, m.skipped, m.errorRows, m.epochs, m.lastCommit, m.stateBytes, m.lateRecords} {
		ch <- d
	}
	m.commitSeconds.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	r := m.r
	for _, s := range r.sources {
		ch <- prometheus.MustNewConstMetric(m.read, prometheus.CounterValue, float64(s.records.Load()), s.node.Name)
	}
	for _, k := range r.sinks {
		ch <- prometheus.MustNewConstMetric(m.written, prometheus.CounterValue, float64(k.rows.Load()), k.node.Name)
		ch <- prometheus.MustNewConstMetric(m.skipped, prometheus.CounterValue, float64(k.skipped.Load()), k.node.Name)
		if at := k.lastCommit.Load(); at > 0 {
			ch <- prometheus.MustNewConstMetric(m.lastCommit, prometheus.GaugeValue, float64(at)/1e9, k.node.Name)
		}
	}
	for _, n := range r.state.nodes {
		size, late := n.Impl.(component.Stateful).Stats()
		ch <- prometheus.MustNewConstMetric(m.stateBytes, prometheus.GaugeValue, float64(size), n.Name)
		ch <- prometheus.MustNewConstMetric(m.lateRecords, prometheus.CounterValue, float64(late), n.Name)
	}
	ch <- prometheus.MustNewConstMetric(m.errorRows, prometheus.CounterValue, float64(r.errorRows.Load()))
	ch <- prometheus.MustNewConstMetric(m.epochs, prometheus.CounterValue, float64(r.epochs.Load()))
	m.commitSeconds.Collect(ch)
}

// committed records a sink's commit that started at start.
func (m *metrics) committed(k *sinkState, start time.Time) {
	now := time.Now()
	k.lastCommit.Store(now.UnixNano())
	m.commitSeconds.WithLabelValues(k.node.Name).Observe(now.Sub(start).Seconds())
}
