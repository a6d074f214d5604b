package runner_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/connectors/files"
	"github.com/sluicehq/sluice/runner"
)

// twoCombines is a chain of two unnamed Combines: 100 s windows of the ids, then 1000 s
// windows of those results. Unnamed, they are called Combine and Combine#2.
const twoCombines = `
pipeline:
  type: chain
  source:` + "SOURCE" + `
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
    - type: Combine
      windowing: {type: fixed, size: 1000s}
      config:
        group_by: []
        combine:
          windows: {value: records, fn: count}
          records: {value: records, fn: sum}
          total: {value: total, fn: sum}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
`

// Two unnamed transforms of one type get distinct names, so each keeps its own state across
// restarts (their snapshots were keyed by one name, and the second overwrote the first) and
// its own metric series (/metrics failed on the duplicates).
func TestUnnamedTransformsOfOneType(t *testing.T) {
	const n = 5000 // record i has event time i s
	dir := t.TempDir()
	writeJSONLines(t, filepath.Join(dir, "in.jsonl"), n)
	path := pipelineFile(t, dir, strings.Replace(twoCombines, "SOURCE", readIDs("    "), 1))
	p, err := runner.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, node := range p.Nodes {
		names = append(names, node.Name)
	}
	if got := names[2] + " " + names[3]; got != "Combine Combine#2" {
		t.Fatalf("the two Combines are named %q, want \"Combine Combine#2\"", got)
	}

	reg := prometheus.NewPedanticRegistry()
	for run := 0; ; run++ { // stopped every 700 records, until a run reaches the end
		if run > 20 {
			t.Fatal("no progress")
		}
		cfg := runner.RunConfig{MaxRecords: 700}
		if run == 0 {
			cfg.Metrics = reg
		}
		st, err := execute(t, path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			if _, err := reg.Gather(); err != nil {
				t.Errorf("gathering the metrics: %v", err)
			}
		}
		if st.Read < 700 {
			break
		}
	}
	lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, l := range lines {
		var r struct{ Windows, Records, Total int64 }
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		w := r.Total / 1_000_000 // window w holds ids 1000w .. 1000w+999
		if r.Windows != 10 || r.Records != 1000 || r.Total != 1_000_000*w+499_500 || seen[w] {
			t.Errorf("window %d: %s, want windows 10, records 1000, total %d, once", w, l, 1_000_000*w+499_500)
		}
		seen[w] = true
	}
	if len(seen) != n/1000 {
		t.Errorf("%d windows of 1000 s written, want %d", len(seen), n/1000)
	}
}
