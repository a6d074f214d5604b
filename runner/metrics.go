package runner

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/component"
)

// metrics exposes a run's progress to Prometheus (docs/operations.md has the table; a web UI
// reads the same families, so names and labels are a contract). Counts are read from the run's
// own counters when scraped, so the data path pays nothing for them; commit latency and
// freshness are observed per commit.
type metrics struct {
	r *run

	read, bytesRead, lagRecords, lagSeconds                *prometheus.Desc
	rowsIn, rowsOut, rowErrors                             *prometheus.Desc
	written, skipped, commits, files, bytesWritten         *prometheus.Desc
	errorRows, epochs, lastCommit, stateBytes, lateRecords *prometheus.Desc
	commitSeconds, freshness                               *prometheus.HistogramVec
	epochSeconds                                           prometheus.Histogram
	epochPhases                                            *prometheus.HistogramVec // epochtrace.go
}

func newMetrics(r *run) *metrics {
	pipeline := prometheus.Labels{"pipeline": r.plan.Options.Name}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("sluice_"+name, help, labels, pipeline)
	}
	latency := prometheus.ExponentialBuckets(0.001, 2, 16) // 1 ms to 33 s
	return &metrics{
		r:            r,
		read:         desc("records_read_total", "Records read from the sources.", "source"),
		bytesRead:    desc("source_bytes_total", "Bytes of the records read, as the source delivers them before decoding (a Kafka record's value).", "source"),
		lagRecords:   desc("source_lag_records", "Records in the partition after the last one read (its end, polled every few seconds, minus the read position).", "source", "partition"),
		lagSeconds:   desc("source_lag_seconds", "While the partition has records left to read, how old the last record read from it is (now minus its time); 0 when none are left.", "source", "partition"),
		rowsIn:       desc("transform_rows_in_total", "Rows that reached the transform's inputs (a sink's: before the rows its checkpoint holds are dropped).", "transform"),
		rowsOut:      desc("transform_rows_out_total", "Rows the transform emitted on an output (a source's: rows decoded); error outputs count in sluice_transform_error_rows_total.", "transform", "output"),
		rowErrors:    desc("transform_error_rows_total", "Rows the transform sent to its error output.", "transform"),
		written:      desc("rows_written_total", "Rows handed to the sink (committed with the next epoch).", "sink"),
		skipped:      desc("rows_skipped_total", "Rows the sink's checkpoint already held, dropped after a restart.", "sink"),
		commits:      desc("sink_commits_total", "Epochs the sink committed.", "sink"),
		files:        desc("sink_files_total", "Data files the sink wrote (0 for sinks that write records, not files).", "sink"),
		bytesWritten: desc("sink_bytes_total", "Bytes the sink wrote to its target, encoded, committed or not yet.", "sink"),
		errorRows:    desc("error_rows_total", "Records sent to error outputs."),
		epochs:       desc("epochs_committed_total", "Epochs committed by every sink."),
		lastCommit:   desc("last_commit_timestamp_seconds", "When the sink last committed (Unix time).", "sink"),
		stateBytes:   desc("state_bytes", "Window state a stateful transform holds (an estimate).", "transform"),
		lateRecords:  desc("late_records_total", "Records that came after their windows had fired (dropped, or sent to the error output).", "transform"),
		commitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sluice_commit_duration_seconds", Help: "How long a sink's commit of an epoch took.",
			ConstLabels: pipeline, Buckets: latency,
		}, []string{"sink"}),
		freshness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sluice_freshness_seconds", Help: "For each commit, the age of the oldest record it made visible: commit time minus the record's time (event or ingest time, as the source gives it).",
			ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(0.01, 2, 18), // 10 ms to 22 min
		}, []string{"sink"}),
		epochSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sluice_epoch_latency_seconds", Help: "From the cut of an epoch (the barrier) to the last sink's commit of it.",
			ConstLabels: pipeline, Buckets: latency,
		}),
		epochPhases: newPhaseHistogram(pipeline),
	}
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.read, m.bytesRead, m.lagRecords, m.lagSeconds, m.rowsIn, m.rowsOut, m.rowErrors,
		m.written, m.skipped, m.commits, m.files, m.bytesWritten, m.errorRows, m.epochs, m.lastCommit, m.stateBytes, m.lateRecords} {
		ch <- d
	}
	m.commitSeconds.Describe(ch)
	m.freshness.Describe(ch)
	m.epochSeconds.Describe(ch)
	m.epochPhases.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	r := m.r
	metric := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	now := time.Now()
	for _, s := range r.sources {
		metric(m.read, prometheus.CounterValue, float64(s.records.Load()), s.node.Name)
		metric(m.bytesRead, prometheus.CounterValue, float64(s.bytes.Load()), s.node.Name)
		for _, l := range r.lag(s, now) {
			part := partitionLabel(l.Partition)
			metric(m.lagRecords, prometheus.GaugeValue, float64(l.records), s.node.Name, part)
			if l.known {
				metric(m.lagSeconds, prometheus.GaugeValue, l.seconds, s.node.Name, part)
			}
		}
	}
	for _, n := range r.plan.Nodes {
		t := r.totals(n)
		if r.bySource[n] == nil {
			metric(m.rowsIn, prometheus.CounterValue, float64(t.in), n.Name)
		}
		for j, tag := range r.outTags[n] {
			metric(m.rowsOut, prometheus.CounterValue, float64(t.out[j]), n.Name, tag)
		}
		if hasErrorOutput(n) {
			metric(m.rowErrors, prometheus.CounterValue, float64(t.errors), n.Name)
		}
	}
	for _, k := range r.sinks {
		metric(m.written, prometheus.CounterValue, float64(k.rows.Load()), k.node.Name)
		metric(m.skipped, prometheus.CounterValue, float64(k.skipped.Load()), k.node.Name)
		metric(m.commits, prometheus.CounterValue, float64(k.commits.Load()), k.node.Name)
		if w, ok := k.sink.(component.Measured); ok {
			files, bytes := w.Written()
			metric(m.files, prometheus.CounterValue, float64(files), k.node.Name)
			metric(m.bytesWritten, prometheus.CounterValue, float64(bytes), k.node.Name)
		}
		if at := k.lastCommit.Load(); at > 0 {
			metric(m.lastCommit, prometheus.GaugeValue, float64(at)/1e9, k.node.Name)
		}
	}
	for _, n := range r.state.nodes {
		size, late := n.Impl.(component.Stateful).Stats()
		metric(m.stateBytes, prometheus.GaugeValue, float64(size), n.Name)
		metric(m.lateRecords, prometheus.CounterValue, float64(late), n.Name)
	}
	metric(m.errorRows, prometheus.CounterValue, float64(r.errorRows.Load()))
	metric(m.epochs, prometheus.CounterValue, float64(r.epochs.Load()))
	m.commitSeconds.Collect(ch)
	m.freshness.Collect(ch)
	m.epochSeconds.Collect(ch)
	m.epochPhases.Collect(ch)
}

// partitionLabel is the partition label of a source partition: its position's source and
// number, as the logs write offsets ("kafka:events[3]").
func partitionLabel(p component.Partition) string {
	return fmt.Sprintf("%s[%d]", p.Source, p.Partition)
}

func hasErrorOutput(n *Node) bool {
	for _, o := range n.Outputs {
		if o.Errors {
			return true
		}
	}
	return false
}

// committed records a sink's commit that started at start; oldest is the time of the oldest
// record it made visible, if known.
func (m *metrics) committed(k *sinkState, start, oldest time.Time) {
	now := time.Now()
	k.lastCommit.Store(now.UnixNano())
	k.commits.Add(1)
	m.commitSeconds.WithLabelValues(k.node.Name).Observe(now.Sub(start).Seconds())
	if !oldest.IsZero() {
		m.freshness.WithLabelValues(k.node.Name).Observe(max(now.Sub(oldest).Seconds(), 0))
	}
}
