package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runner"
)

// A run is alive but not ready while it opens, ready once it runs, and not ready once it ended.
func TestHealthFollowsTheRun(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 5}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options: {checkpoint_interval: 20ms}
`)
	h := runner.NewHealth()
	if err := h.Ready(); err == nil || !strings.Contains(err.Error(), "starting") {
		t.Fatalf("before the run: Ready() = %v, want not ready while starting", err)
	}
	if err := h.Live(); err != nil {
		t.Fatalf("before the run: Live() = %v, want alive", err)
	}
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop, Health: h})
	deadline := time.Now().Add(10 * time.Second)
	for h.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the run was not ready within 10 s: %v", h.Ready())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.Live(); err != nil {
		t.Fatalf("while running: Live() = %v", err)
	}
	close(stop)
	if err := wait("a graceful stop"); err != nil {
		t.Fatal(err)
	}
	if err := h.Ready(); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("after the run: Ready() = %v, want not ready: the run has ended", err)
	}
}
