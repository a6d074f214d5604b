package acceptance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/files"
)

// A seeded generator is exactly once end to end: a run killed part-way and resumed commits
// exactly the messages one uninterrupted run commits, the same text, each once.
func TestGeneratorKilledAndResumed(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const messages = 20000
	pipeline := func(dir string) string {
		p := filepath.Join(dir, "p.yaml")
		writeFile(t, p, fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: StreamingDataGenerator
    config: {schema_template: GAME_EVENT, seed: 3, qps: 20000, messages_limit: %d}
  sink:
    type: WriteToJson
    config: {path: %s}
options:
  checkpoint_interval: 100ms
`, messages, filepath.Join(dir, "out")))
		return p
	}
	committed := func(dir string) []string {
		lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = string(l)
		}
		slices.Sort(out)
		return out
	}
	refDir := t.TempDir()
	if out, err := exec.Command(binary, "run", pipeline(refDir)).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	want := committed(refDir)
	if len(want) != messages || len(slices.Compact(slices.Clone(want))) != messages {
		t.Fatalf("the reference run committed %d messages, want %d distinct", len(want), messages)
	}

	dir := t.TempDir()
	p := pipeline(dir)
	cmd := exec.Command(binary, "run", p)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed part-way: once it has committed some of the messages (on a loaded machine, more
	// than the 500 ms that once stood here).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if lines, _ := files.ReadCommitted(filepath.Join(dir, "out")); len(lines) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run to kill committed nothing within 30 s")
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	before := len(committed(dir))
	if out, err := exec.Command(binary, "run", p).CombinedOutput(); err != nil || !strings.Contains(string(out), "committed") {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	got := committed(dir)
	t.Logf("killed part-way with %d of %d messages committed; the resumed run committed the rest", before, messages)
	if !slices.Equal(got, want) {
		t.Fatalf("killed and resumed: %d messages committed, differing from the uninterrupted run's %d", len(got), len(want))
	}
}
