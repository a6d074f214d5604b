package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/runner"
)

// A run's metrics say what it read, wrote, sent to error outputs and committed.
func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 5}
  transforms:
    - type: MapToFields
      config:
        append: true
        fields: {r: 100 / id}
        error_handling: {output: bad}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
  extra_transforms:
    - type: WriteToJson
      name: dead
      input: MapToFields.bad
      config: {path: {dir}/dead}
options: {name: metered, checkpoint_interval: 20ms}
`)
	reg := prometheus.NewPedanticRegistry()
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop, Metrics: reg})
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := testutil.GatherAndCount(reg, "sluice_last_commit_timestamp_seconds")
		if err == nil && n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no commit showed in the metrics within 10 s (%d, %v)", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := `
# HELP sluice_error_rows_total Records sent to error outputs.
# TYPE sluice_error_rows_total counter
sluice_error_rows_total{pipeline="metered"} 1
# HELP sluice_records_read_total Records read from the sources.
# TYPE sluice_records_read_total counter
sluice_records_read_total{pipeline="metered",source="TestTrickle"} 5
# HELP sluice_rows_written_total Rows handed to the sink (committed with the next epoch).
# TYPE sluice_rows_written_total counter
sluice_rows_written_total{pipeline="metered",sink="WriteToJson"} 4
sluice_rows_written_total{pipeline="metered",sink="dead"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"sluice_records_read_total", "sluice_rows_written_total", "sluice_error_rows_total"); err != nil {
		t.Error(err)
	}
	if n, _ := testutil.GatherAndCount(reg, "sluice_commit_duration_seconds"); n != 2 {
		t.Errorf("commit latency is reported for %d sinks, want 2", n)
	}
	close(stop)
	if err := wait("stop"); err != nil {
		t.Fatal(err)
	}
	if n, _ := testutil.GatherAndCount(reg); n != 0 {
		t.Errorf("%d metrics stay registered after the run ended", n)
	}
}

// A stateful transform reports the size of its window state and its late records.
func TestStateMetrics(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 5}
  transforms:
    - type: GroupByKey
      windowing: {type: fixed, size: 1h}
      config: {key: "'all'"}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options: {name: stateful, checkpoint_interval: 20ms}
`)
	reg := prometheus.NewPedanticRegistry()
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop, Metrics: reg})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		size := -1.0
		for _, mf := range mfs {
			if mf.GetName() == "sluice_state_bytes" {
				size = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if size > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sluice_state_bytes did not show the open window's state within 10 s (%v)", size)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := testutil.GatherAndCount(reg, "sluice_late_records_total"); n != 1 {
		t.Errorf("late records are reported for %d transforms, want 1", n)
	}
	close(stop)
	if err := wait("stop"); err != nil {
		t.Fatal(err)
	}
}

// Every metric family a run exports (docs/operations.md's table, which a web UI reads) is
// there after a short run, with its labels: a pipeline that publishes to a topic of the
// in-process Kafka broker and reads it back through a transform with an error output.
func TestMetricFamilies(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  transforms:
    - type: Create
      name: make
      config:
        elements: [{id: 0}, {id: 1}, {id: 2}, {id: 3}, {id: 4}]
    - type: WriteToKafka
      name: publish
      input: make
      config: {bootstrap_servers: 'embedded:{dir}/kafka', topic: metric_families, format: JSON}
    - type: ReadFromKafka
      name: events
      config:
        bootstrap_servers: 'embedded:{dir}/kafka'
        topic: metric_families
        format: JSON
        auto_offset_reset_config: earliest
        schema: {type: object, properties: {id: {type: integer}}}
    - type: MapToFields
      name: ratio
      input: events
      config:
        append: true
        fields: {r: 100 / id}
        error_handling: {output: bad}
    - type: WriteToJson
      name: out
      input: ratio
      config: {path: {dir}/out}
    - type: WriteToJson
      name: dead
      input: ratio.bad
      config: {path: {dir}/dead}
options: {name: families, checkpoint_interval: 50ms}
`)
	t.Cleanup(embedded.CloseDirs) // the broker the pipeline started in this process
	reg := prometheus.NewPedanticRegistry()
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop, Metrics: reg})
	value := func(name string, labels map[string]string) float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
		metrics:
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
						continue metrics
					}
				}
				switch {
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		return -1
	}
	deadline := time.Now().Add(10 * time.Second)
	for value("sluice_rows_written_total", map[string]string{"sink": "out"}) < 4 ||
		value("sluice_freshness_seconds", map[string]string{"sink": "out"}) < 1 ||
		value("sluice_source_lag_records", map[string]string{"source": "events"}) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the records were not read back and committed within 10 s: %v rows written, %v lag",
				value("sluice_rows_written_total", map[string]string{"sink": "out"}), value("sluice_source_lag_records", map[string]string{"source": "events"}))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string][]string{}
	for _, mf := range mfs {
		var names []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			names = append(names, lp.GetName())
		}
		labels[mf.GetName()] = names
	}
	want := map[string]string{
		"sluice_records_read_total":            "pipeline source",
		"sluice_source_bytes_total":            "pipeline source",
		"sluice_source_lag_records":            "partition pipeline source",
		"sluice_source_lag_seconds":            "partition pipeline source",
		"sluice_transform_rows_in_total":       "pipeline transform",
		"sluice_transform_rows_out_total":      "output pipeline transform",
		"sluice_transform_error_rows_total":    "pipeline transform",
		"sluice_rows_written_total":            "pipeline sink",
		"sluice_rows_skipped_total":            "pipeline sink",
		"sluice_sink_commits_total":            "pipeline sink",
		"sluice_sink_files_total":              "pipeline sink",
		"sluice_sink_bytes_total":              "pipeline sink",
		"sluice_last_commit_timestamp_seconds": "pipeline sink",
		"sluice_commit_duration_seconds":       "pipeline sink",
		"sluice_freshness_seconds":             "pipeline sink",
		"sluice_epoch_latency_seconds":         "pipeline",
		"sluice_epoch_phase_seconds":           "phase pipeline",
		"sluice_error_rows_total":              "pipeline",
		"sluice_epochs_committed_total":        "pipeline",
		"sluice_kafka_read_bytes_total":        "node_id pipeline sink source",
		"sluice_kafka_fetch_bytes_total":       "node_id pipeline sink source topic",
		"sluice_kafka_produce_bytes_total":     "node_id pipeline sink source topic",
	}
	for name, l := range want {
		if got, ok := labels[name]; !ok {
			t.Errorf("no family %s", name)
		} else if strings.Join(got, " ") != l {
			t.Errorf("%s has labels %q, want %q", name, got, l)
		}
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sluice_transform_rows_in_total", map[string]string{"transform": "ratio"}, 5},
		{"sluice_transform_rows_out_total", map[string]string{"transform": "ratio", "output": "good"}, 4},
		{"sluice_transform_error_rows_total", map[string]string{"transform": "ratio"}, 1},
		{"sluice_transform_rows_out_total", map[string]string{"transform": "events"}, 5},
		{"sluice_transform_rows_in_total", map[string]string{"transform": "dead"}, 1},
		{"sluice_source_lag_seconds", map[string]string{"source": "events"}, 0},
	}
	for _, c := range checks {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"sluice_source_bytes_total", map[string]string{"source": "events"}},
		{"sluice_sink_bytes_total", map[string]string{"sink": "publish"}},
		{"sluice_sink_files_total", map[string]string{"sink": "out"}},
		{"sluice_sink_bytes_total", map[string]string{"sink": "out"}},
		{"sluice_sink_commits_total", map[string]string{"sink": "out"}},
		{"sluice_kafka_read_bytes_total", map[string]string{"source": "events"}},
		{"sluice_kafka_read_bytes_total", map[string]string{"sink": "publish"}},
	} {
		if got := value(c.name, c.labels); got <= 0 {
			t.Errorf("%s%v = %v, want more than 0", c.name, c.labels, got)
		}
	}
	close(stop)
	if err := wait("stop"); err != nil {
		t.Fatal(err)
	}
	if n, _ := testutil.GatherAndCount(reg); n != 0 {
		t.Errorf("%d metrics stay registered after the run ended", n)
	}
}
