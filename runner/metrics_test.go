package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
