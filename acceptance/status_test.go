package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// `sluice status` of a pipeline that committed everything, after more records arrived: each
// sink's committed offsets are where the run stopped, the ends and the lag count the new
// records per partition, the last commit is recent, and no secret is printed.
func TestStatus(t *testing.T) {
	b := startDevKafka(t, "--topic", "events:3")
	dir := t.TempDir()
	const secret = "s3cr3t-user:pa55word"
	pipeline := filepath.Join(dir, "status.yaml")
	yaml := fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: events
      format: JSON
      schema: {type: object, properties: {id: {type: integer}}}
      auto_offset_reset_config: earliest
      consumer_config: {basic.auth.user.info: "${env:STATUS_TEST_SECRET}"}
  sink:
    type: WriteToIceberg
    name: table
    config:
      table: db.events
      catalog_properties: {type: sql, warehouse: %s}
  extra_transforms:
    - type: WriteToJson
      name: files
      input: ReadFromKafka
      config: {path: %s}
options:
  checkpoint_interval: 1s
`, b.addr, filepath.Join(dir, "warehouse"), filepath.Join(dir, "out"))
	if err := os.WriteFile(pipeline, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STATUS_TEST_SECRET", secret)

	produce := func(perPartition []int, from int) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var recs []*kgo.Record
		id := from
		for p, n := range perPartition {
			for range n {
				recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(p), Value: fmt.Appendf(nil, `{"id": %d}`, id)})
				id++
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce([]int{10, 20, 30}, 0)
	run := exec.Command(binary, "run", pipeline, "--stop-at-end")
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil || !strings.Contains(string(out), "read 60 records") {
		t.Fatalf("run: %v\n%s", err, out)
	}
	produce([]int{1, 0, 5}, 60)

	cmd := exec.Command(binary, "status", "--json", pipeline)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("status printed the secret:\n%s", out)
	}
	var st statusJSON
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	wantCommitted, wantEnd := []int64{10, 20, 30}, []int64{11, 20, 35}
	if len(st.Sinks) != 2 {
		t.Fatalf("status lists %d sinks, want 2:\n%s", len(st.Sinks), out)
	}
	for _, s := range st.Sinks {
		if s.Error != "" || !s.Committed || s.SinceCommit == nil || *s.SinceCommit < 0 || *s.SinceCommit > 120 {
			t.Errorf("sink %s: error %q, committed %v, seconds since commit %v", s.Name, s.Error, s.Committed, s.SinceCommit)
		}
		if s.Lag == nil || *s.Lag != 6 {
			t.Errorf("sink %s: lag %v, want 6", s.Name, s.Lag)
		}
		if len(s.Partitions) != 3 {
			t.Fatalf("sink %s: %d partitions, want 3:\n%s", s.Name, len(s.Partitions), out)
		}
		for i, p := range s.Partitions {
			if p.Source != "kafka:events" || p.Partition != int32(i) || p.Committed == nil || *p.Committed != wantCommitted[i] ||
				p.End == nil || *p.End != wantEnd[i] || p.Lag == nil || *p.Lag != wantEnd[i]-wantCommitted[i] {
				t.Errorf("sink %s partition %d: %s, want committed %d, end %d", s.Name, i, jsonOf(p), wantCommitted[i], wantEnd[i])
			}
		}
	}

	code, text, errOut := sluice(t, "status", pipeline)
	if code != exitOK || !strings.Contains(text, "table: lag 6") || !strings.Contains(text, "files: lag 6") ||
		!strings.Contains(text, "kafka:events") || strings.Contains(text+errOut, secret) {
		t.Errorf("status: exit %d\n%s%s", code, text, errOut)
	}
}

// statusJSON is what the tests read of `sluice status --json`: the JSON as
// a user's script reads it, not the command's own types.
type statusJSON struct {
	Sinks []struct {
		Name        string   `json:"name"`
		Committed   bool     `json:"committed"`
		SinceCommit *float64 `json:"seconds_since_commit"`
		Lag         *int64   `json:"lag"`
		Error       string   `json:"error"`
		Partitions  []struct {
			Source    string `json:"source"`
			Partition int32  `json:"partition"`
			Committed *int64 `json:"committed"`
			End       *int64 `json:"end"`
			Lag       *int64 `json:"lag"`
		} `json:"partitions"`
	} `json:"sinks"`
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
