package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/connectors/files"
	"github.com/sluicehq/sluice/runner"
)

// pipelineFile writes a pipeline into dir, with {dir} replaced by dir, and returns its path.
func pipelineFile(t *testing.T, dir, yaml string) string {
	t.Helper()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(yaml, "{dir}", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func execute(t *testing.T, path string, cfg runner.RunConfig) (*runner.Stats, error) {
	t.Helper()
	p, err := runner.Load(path)
	if err != nil {
		t.Fatalf("invalid pipeline: %v", err)
	}
	return runner.Execute(context.Background(), p, cfg)
}

// committedIDs reads a WriteToJson directory and counts each row's id.
func committedIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	ids := map[int64]int{}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return ids // the sink has not opened yet
	}
	lines, err := files.ReadCommitted(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		var r struct{ ID int64 }
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		ids[r.ID]++
	}
	return ids
}

func exactlyOnce(t *testing.T, what string, ids map[int64]int, n int) {
	t.Helper()
	for id := range int64(n) {
		if ids[id] != 1 {
			t.Errorf("%s: id %d written %d times", what, id, ids[id])
		}
	}
	if len(ids) != n {
		t.Errorf("%s: %d distinct ids, want %d", what, len(ids), n)
	}
}

func writeJSONLines(t *testing.T, path string, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": %d, "v": "x%d"}`+"\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readIDs is a ReadFromJson of {dir}/in.jsonl whose keys are indented by indent.
func readIDs(indent string) string {
	return strings.ReplaceAll(`
#type: ReadFromJson
#config:
#  path: {dir}/in.jsonl
#  schema: {type: object, properties: {id: {type: integer}, v: {type: string}}, required: [id]}`, "#", indent)
}

// A source feeding two sinks resumes from the sink that is behind, the sink that is ahead
// drops what it already holds, and its checkpoint never goes backwards: each sink ends up
// exactly once on its own.
func TestFanOutResumesFromTheSinkBehind(t *testing.T) {
	dir := t.TempDir()
	writeJSONLines(t, filepath.Join(dir, "in.jsonl"), 5000)
	path := pipelineFile(t, dir, `
pipeline:
  transforms:
    - name: read`+readIDs("      ")+`
    - type: WriteToJson
      name: a
      input: read
      config: {path: {dir}/a}
    - type: WriteToJson
      name: b
      input: read
      config: {path: {dir}/b}
options: {lanes: 3}
`)
	// Two runs: about 2000 records in a first epoch, the rest in later ones.
	for _, limit := range []int64{2000, 0} {
		if _, err := execute(t, path, runner.RunConfig{MaxRecords: limit}); err != nil {
			t.Fatal(err)
		}
	}
	// b loses its later epochs, as if it had crashed before committing them.
	epochs, _ := filepath.Glob(filepath.Join(dir, "b", "epoch-*"))
	if len(epochs) < 2 {
		t.Fatalf("b has %d epochs, want 2 or more", len(epochs))
	}
	for _, e := range epochs[1:] {
		if err := os.RemoveAll(e); err != nil {
			t.Fatal(err)
		}
	}
	behind := len(committedIDs(t, filepath.Join(dir, "b")))
	// A short run re-reads from b's position; a skips it all and must keep its checkpoint.
	st, err := execute(t, path, runner.RunConfig{MaxRecords: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Read == 0 || st.Sinks[0].Skipped != st.Read || st.Sinks[1].Rows != st.Read {
		t.Errorf("short run: read %d, a skipped %d, b wrote %d; want all equal", st.Read, st.Sinks[0].Skipped, st.Sinks[1].Rows)
	}
	st, err = execute(t, path, runner.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Sinks[0].Rows != 0 {
		t.Errorf("a wrote %d rows again after the short run: its checkpoint went backwards", st.Sinks[0].Rows)
	}
	if behind >= 5000 {
		t.Fatalf("b was not behind: %d rows", behind)
	}
	exactlyOnce(t, "a", committedIDs(t, filepath.Join(dir, "a")), 5000)
	exactlyOnce(t, "b", committedIDs(t, filepath.Join(dir, "b")), 5000)
}

// A sink added to a pipeline starts where the pipeline is: the existing sink loses nothing
// and writes nothing twice.
func TestNewSinkStartsWhereThePipelineIs(t *testing.T) {
	dir := t.TempDir()
	writeJSONLines(t, filepath.Join(dir, "in.jsonl"), 3000)
	one := `
pipeline:
  transforms:
    - name: read` + readIDs("      ") + `
    - type: WriteToJson
      name: a
      input: read
      config: {path: {dir}/a}
`
	if _, err := execute(t, pipelineFile(t, dir, one), runner.RunConfig{MaxRecords: 1000}); err != nil {
		t.Fatal(err)
	}
	two := one + `    - type: WriteToJson
      name: b
      input: read
      config: {path: {dir}/b}
`
	if _, err := execute(t, pipelineFile(t, dir, two), runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, "a", committedIDs(t, filepath.Join(dir, "a")), 3000)
	if b := committedIDs(t, filepath.Join(dir, "b")); len(b) != 2000 {
		t.Errorf("b holds %d rows, want the 2000 after a's checkpoint", len(b))
	}
}

// --max-records stops gracefully and commits what was read; the next run continues there.
func TestStopAndResume(t *testing.T) {
	dir := t.TempDir()
	writeJSONLines(t, filepath.Join(dir, "in.jsonl"), 10_000)
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:`+readIDs("    ")+`
  transforms:
    - type: Filter
      config: {keep: "id >= 0"}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
`)
	total := int64(0)
	for run := 0; total < 10_000; run++ {
		if run > 20 {
			t.Fatal("no progress")
		}
		st, err := execute(t, path, runner.RunConfig{MaxRecords: 2500})
		if err != nil {
			t.Fatal(err)
		}
		if st.Read < 2500 && total+st.Read < 10_000 {
			t.Fatalf("run %d stopped after %d records, before --max-records", run, st.Read)
		}
		total += st.Read
		if got := len(committedIDs(t, filepath.Join(dir, "out"))); int64(got) != total {
			t.Fatalf("after run %d: %d rows committed, %d read in all", run, got, total)
		}
	}
	exactlyOnce(t, "out", committedIDs(t, filepath.Join(dir, "out")), 10_000)
}

// A record that fails without error_handling stops the pipeline at its position, and the
// epoch holding it is not committed.
func TestFailedRecordStopsAtItsPosition(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  transforms:
    - type: Create
      config:
        elements: [{id: 0, d: 1}, {id: 1, d: 2}, {id: 2, d: 0}, {id: 3, d: 4}]
    - type: MapToFields
      name: ratio
      config:
        append: true
        fields: {r: 10 / d}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
`)
	_, err := execute(t, path, runner.RunConfig{})
	if err == nil {
		t.Fatal("division by zero did not stop the pipeline")
	}
	for _, want := range []string{"MapToFields 'ratio' (" + path + ":8:7)", "create:Create partition 0 offset 2", "division by zero"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if ids := committedIDs(t, filepath.Join(dir, "out")); len(ids) != 0 {
		t.Errorf("rows committed despite the failure: %v", ids)
	}
}

// Two sources merged by Flatten: the sink's checkpoint covers both, so a rerun writes nothing.
func TestTwoSourcesIntoOneSink(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  transforms:
    - type: Create
      name: evens
      config: {elements: [{id: 0}, {id: 2}, {id: 4}]}
    - type: Create
      name: odds
      config: {elements: [{id: 1}, {id: 3}]}
    - type: WriteToJson
      input: [evens, odds]
      config: {path: {dir}/out}
`)
	for run := range 2 {
		st, err := execute(t, path, runner.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{5, 0}[run]; st.Sinks[0].Rows != want {
			t.Errorf("run %d wrote %d rows, want %d", run, st.Sinks[0].Rows, want)
		}
	}
	exactlyOnce(t, "out", committedIDs(t, filepath.Join(dir, "out")), 5)
}

// A sink whose checkpoint lacks a partition that another sink holds (it lost the epoch that
// first covered it) gets that partition from its start; the other sink drops the repeats.
func TestSinkLackingAPartitionGetsItFromItsStart(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSONLines(t, filepath.Join(in, "1.jsonl"), 100)
	path := pipelineFile(t, dir, `
pipeline:
  transforms:
    - type: ReadFromJson
      name: read
      config:
        path: {dir}/in
        schema: {type: object, properties: {id: {type: integer}, v: {type: string}}, required: [id]}
    - type: WriteToJson
      name: a
      input: read
      config: {path: {dir}/a}
    - type: WriteToJson
      name: b
      input: read
      config: {path: {dir}/b}
`)
	if _, err := execute(t, path, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	// A second file, ids 100..199, arrives; both sinks commit it, then b loses that epoch.
	var more strings.Builder
	for i := 100; i < 200; i++ {
		fmt.Fprintf(&more, `{"id": %d, "v": "x"}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(in, "2.jsonl"), []byte(more.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(t, path, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	epochs, _ := filepath.Glob(filepath.Join(dir, "b", "epoch-*"))
	if len(epochs) != 2 {
		t.Fatalf("b has %d epochs, want 2", len(epochs))
	}
	if err := os.RemoveAll(epochs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(t, path, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, "a", committedIDs(t, filepath.Join(dir, "a")), 200)
	exactlyOnce(t, "b", committedIDs(t, filepath.Join(dir, "b")), 200)
}
