package runner_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/runner"
)

// lockedBuffer is a log destination that a test reads while the run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the JSON log lines whose msg starts with prefix.
func (l *lockedBuffer) lines(t *testing.T, prefix string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// A source says where it starts and why: a first run at the earliest offset with the backlog
// it finds, the next at the last commit. A running pipeline logs its progress every interval:
// records read, the rate, the lag and the last commit.
func TestStartAndProgressLines(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(embedded.CloseDirs)
	publish := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: Create
    config: {elements: [{id: 1}, {id: 2}, {id: 3}, {id: 4}, {id: 5}]}
  sink:
    type: WriteToKafka
    config: {bootstrap_servers: 'embedded:{dir}/kafka', topic: starts, format: JSON}
options: {name: publish}
`)
	if _, err := execute(t, publish, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	read := pipelineFile(t, t.TempDir(), strings.ReplaceAll(`
pipeline:
  type: chain
  source:
    type: ReadFromKafka
    name: events
    config:
      bootstrap_servers: 'embedded:{kafka}/kafka'
      topic: starts
      format: JSON
      auto_offset_reset_config: earliest
      schema: {type: object, properties: {id: {type: integer}}}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options: {name: reader, checkpoint_interval: 20ms}
`, "{kafka}", dir))
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	if _, err := execute(t, read, runner.RunConfig{StopAtEnd: true, Log: log}); err != nil {
		t.Fatal(err)
	}
	first := logs.lines(t, "where the source starts")
	// The broker's default is 8 partitions; the backlog counts offsets, with the transactions'
	// commit markers.
	if len(first) != 1 || !strings.Contains(first[0]["msg"].(string), "8 partitions at the earliest offset") ||
		first[0]["source"] != "events" || first[0]["backlog_records"].(float64) < 5 ||
		!strings.HasPrefix(first[0]["at"].(string), "kafka:starts[0]=0 (earliest), kafka:starts[1]=0 (earliest)") {
		t.Fatalf("the first run's start line: %v", first)
	}

	logs = &lockedBuffer{}
	stop := make(chan struct{})
	wait := start(t, read, runner.RunConfig{Stop: stop, Log: slog.New(slog.NewJSONHandler(logs, nil)), ProgressInterval: 30 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Second)
	for len(logs.lines(t, "progress")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no progress line within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	if err := wait("stop"); err != nil {
		t.Fatal(err)
	}
	second := logs.lines(t, "where the source starts")
	if len(second) != 1 || !strings.Contains(second[0]["msg"].(string), "8 partitions at the last commit") ||
		strings.Count(second[0]["at"].(string), "(checkpoint)") != 8 || second[0]["backlog_records"] != 0.0 {
		t.Fatalf("the second run's start line: %v", second)
	}
	p := logs.lines(t, "progress")[1]
	src, ok := p["source_events"].(map[string]any)
	if !ok || src["read"] != 0.0 || src["per_second"] != 0.0 || src["lag"] != 0.0 || p["epochs_committed"] == nil || p["last_commit"] != "none yet" {
		t.Fatalf("progress line of a caught-up run: %v", p)
	}
}
