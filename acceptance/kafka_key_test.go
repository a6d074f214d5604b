package acceptance

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/runner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// WriteToKafka's key: an expression over the row becomes each record's key, type-checked
// before the run like every expression.
func TestWriteToKafkaKey(t *testing.T) {
	t.Parallel()
	// A topic and a pipeline of their own in the process's embedded broker, which keeps the
	// checkpoints of every run in it (go test -count=2 runs this test twice in one process).
	topic := fmt.Sprintf("keyed_%d", time.Now().UnixNano())
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	pipeline := func(key string) {
		writeFile(t, path, fmt.Sprintf(`pipeline:
  type: chain
  transforms:
    - type: Create
      config:
        elements: [{id: 1, user: ada}, {id: 2, user: bob}, {id: 3, user: cy}]
  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: embedded
      topic: %s
      format: JSON
      key: %s
options:
  name: %s
`, topic, key, topic))
	}

	pipeline(`usr + "-" + string(id)`)
	if _, err := runner.Load(path); err == nil || !strings.Contains(err.Error(), path+`:13:12: unknown field "usr"`) {
		t.Fatalf("a key with an unknown field: %v", err)
	}

	pipeline(`user + "-" + string(id)`)
	p, err := runner.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Execute(context.Background(), p, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	addr, err := embedded.Addr()
	if err != nil {
		t.Fatal(err)
	}
	cl := devClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var keys []string
	for len(keys) < 3 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %q, want 3 records", keys)
		}
		fs.EachRecord(func(r *kgo.Record) { keys = append(keys, string(r.Key)) })
	}
	slices.Sort(keys)
	if want := []string{"ada-1", "bob-2", "cy-3"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
}
