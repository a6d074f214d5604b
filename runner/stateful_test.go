package runner_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/connectors/files"
	"github.com/sluicehq/sluice/runner"
)

// A windowed Combine stopped and resumed many times gives each window once, with the same
// result as one uninterrupted run: open windows travel in the checkpoint's state, and a
// window fired and committed before a stop is not fired again.
func TestWindowsAcrossStops(t *testing.T) {
	const n = 10_000 // record i has event time i s; fixed 100 s windows hold 100 records each
	pipeline := `
pipeline:
  type: chain
  source:` + readIDs("    ") + `
  transforms:
    - type: AssignTimestamps
      config: {timestamp: id}
    - type: Combine
      windowing: {type: fixed, size: 100s}
      config:
        group_by: []
        combine:
          records: {value: id, fn: count}
          total: {value: id, fn: sum}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
`
	want := map[int64]int64{} // total of each window -> its count
	for w := range int64(n / 100) {
		want[100*100*w+4950] = 100
	}

	once := t.TempDir()
	writeJSONLines(t, filepath.Join(once, "in.jsonl"), n)
	if _, err := execute(t, pipelineFile(t, once, pipeline), runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	checkWindows(t, "one run", filepath.Join(once, "out"), want)

	stops := t.TempDir()
	writeJSONLines(t, filepath.Join(stops, "in.jsonl"), n)
	path := pipelineFile(t, stops, pipeline)
	for run := 0; ; run++ { // until a run reaches the end of the input, which fires the rest
		if run > 20 {
			t.Fatal("no progress")
		}
		st, err := execute(t, path, runner.RunConfig{MaxRecords: 1500})
		if err != nil {
			t.Fatal(err)
		}
		if st.Read < 1500 {
			break
		}
	}
	checkWindows(t, "stopped and resumed", filepath.Join(stops, "out"), want)
}

// checkWindows reads the Combine's output in dir and compares it with want (total -> count),
// each window exactly once.
func checkWindows(t *testing.T, what, dir string, want map[int64]int64) {
	t.Helper()
	lines, err := files.ReadCommitted(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, l := range lines {
		var r struct{ Records, Total int64 }
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if want[r.Total] != r.Records {
			t.Errorf("%s: window with total %d counted %d records, want %d", what, r.Total, r.Records, want[r.Total])
		}
		seen[r.Total]++
	}
	for total := range want {
		if seen[total] != 1 {
			t.Errorf("%s: window with total %d written %d times", what, total, seen[total])
		}
	}
}

// WindowInto sets the windows of a Combine downstream, a pipeline's windowing reaches the
// Combine through its root, and ExtractWindowingInfo shows each result's window: the same
// fixed 10 s windows three ways.
func TestWindowingPushDown(t *testing.T) {
	create := `
    - type: Create
      config:
        elements: [{user: alice, t: 1}, {user: alice, t: 3}, {user: alice, t: 101}, {user: bob, t: 7}, {user: bob, t: 12}]
    - type: AssignTimestamps
      config: {timestamp: t}`
	combine := `
    - type: Combine
      config:
        group_by: user
        combine: {clicks: {value: t, fn: count}}
    - type: ExtractWindowingInfo
      config: {fields: [window_string]}
    - type: WriteToJson
      config: {path: {dir}/out}`
	want := []string{
		`{"user":"alice","clicks":2,"window_string":"[0.0, 10.0)"}`,
		`{"user":"alice","clicks":1,"window_string":"[100.0, 110.0)"}`,
		`{"user":"bob","clicks":1,"window_string":"[0.0, 10.0)"}`,
		`{"user":"bob","clicks":1,"window_string":"[10.0, 20.0)"}`,
	}
	for name, pipeline := range map[string]string{
		"WindowInto": "pipeline:\n  type: chain\n  transforms:" + create + `
    - type: WindowInto
      windowing: {type: fixed, size: 10s}` + combine + "\n",
		"inline":   "pipeline:\n  type: chain\n  transforms:" + create + strings.Replace(combine, "    - type: Combine\n", "    - type: Combine\n      windowing: {type: fixed, size: 10s}\n", 1) + "\n",
		"pipeline": "pipeline:\n  type: chain\n  windowing: {type: fixed, size: 10s}\n  transforms:" + create + combine + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := execute(t, pipelineFile(t, dir, pipeline), runner.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, string(l))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A grouping whose state outgrows options.state_limit_mb stops the pipeline with an error
// that names it and the limit, before the machine swaps; nothing of the epoch is committed.
func TestStateLimit(t *testing.T) {
	dir := t.TempDir()
	writeJSONLines(t, filepath.Join(dir, "in.jsonl"), 150_000) // about 18 bytes of state each
	_, err := execute(t, pipelineFile(t, dir, `
pipeline:
  type: chain
  source:`+readIDs("    ")+`
  transforms:
    - type: GroupByKey
      windowing: {type: fixed, size: 1h}
      config: {key: "'all'"}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options:
  state_limit_mb: 1
`), runner.RunConfig{})
	if err == nil || !strings.Contains(err.Error(), "over options.state_limit_mb (1)") || !strings.Contains(err.Error(), "GroupByKey") {
		t.Fatalf("got %v, want the state limit error naming the GroupByKey", err)
	}
	if ids := committedIDs(t, filepath.Join(dir, "out")); len(ids) != 0 {
		t.Errorf("%d rows committed after the limit stopped the pipeline", len(ids))
	}
}

// Beam's session example: after a sessions Combine, ExtractWindowingInfo shows the merged
// sessions, and keeping those longer than 15 s leaves bob [7, 30) and alice [101, 125).
func TestSessionsExample(t *testing.T) {
	dir := t.TempDir()
	_, err := execute(t, pipelineFile(t, dir, `
pipeline:
  type: chain
  transforms:
    - type: Create
      config:
        elements: [{user: alice, t: 1}, {user: alice, t: 3}, {user: alice, t: 101}, {user: alice, t: 109},
                   {user: alice, t: 115}, {user: bob, t: 7}, {user: bob, t: 12}, {user: bob, t: 20}]
    - type: AssignTimestamps
      config: {timestamp: t}
    - type: Combine
      windowing: {type: sessions, gap: 10s}
      config:
        group_by: user
        combine: {clicks: {value: t, fn: count}}
    - type: ExtractWindowingInfo
      config: {fields: [window_start, window_end, window_string]}
    - type: Filter
      config: {keep: "window_end.Sub(window_start).Seconds() > 15"}
    - type: MapToFields
      config: {fields: {user: user, clicks: clicks, window: window_string}}
    - type: WriteToJson
      config: {path: {dir}/out}
`), runner.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, string(l))
	}
	slices.Sort(got)
	want := []string{`{"user":"alice","clicks":3,"window":"[101.0, 125.0)"}`, `{"user":"bob","clicks":3,"window":"[7.0, 30.0)"}`}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
