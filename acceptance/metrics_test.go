package acceptance

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sluice run --http-addr serves every metric family of docs/operations.md's table with its
// labels, franz-go's client metrics among them, while records flow from a generator through
// Kafka to a file sink; off a terminal it logs where each source starts and a progress line
// every --progress-interval.
func TestMetricsOverHTTP(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	kafka := "embedded:" + filepath.Join(dir, "kafka")
	writeFile(t, pipeline, `pipeline:
  transforms:
    - type: StreamingDataGenerator
      name: gen
      config: {schema_template: GAME_EVENT, qps: 200, seed: 1}
    - type: WriteToKafka
      name: publish
      input: gen
      config: {bootstrap_servers: "`+kafka+`", topic: events, format: JSON}
    - type: ReadFromKafka
      name: events
      config:
        bootstrap_servers: "`+kafka+`"
        topic: events
        format: JSON
        auto_offset_reset_config: earliest
        schema: {type: object, properties: {score: {type: integer}}}
    - type: MapToFields
      name: ratio
      input: events
      config:
        fields: {r: 100 / (score % 3)}
        error_handling: {output: bad}
    - type: WriteToJson
      name: out
      input: ratio
      config: {path: `+filepath.Join(dir, "out")+`}
    - type: WriteToJson
      name: dead
      input: ratio.bad
      config: {path: `+filepath.Join(dir, "dead")+`}
options: {name: observed, checkpoint_interval: 200ms}
`)
	addr := freeAddr(t)
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := sluice(t, "run", pipeline, "--http-addr", addr, "--for", "4s", "--progress-interval", "500ms")
		done <- result{code, stderr}
	}()
	// Each family with the labels its series carry.
	want := map[string][]string{
		"sluice_records_read_total":            {"pipeline", "source"},
		"sluice_source_bytes_total":            {"pipeline", "source"},
		"sluice_source_lag_records":            {"partition", "pipeline", "source"},
		"sluice_source_lag_seconds":            {"partition", "pipeline", "source"},
		"sluice_transform_rows_in_total":       {"pipeline", "transform"},
		"sluice_transform_rows_out_total":      {"output", "pipeline", "transform"},
		"sluice_transform_error_rows_total":    {"pipeline", "transform"},
		"sluice_rows_written_total":            {"pipeline", "sink"},
		"sluice_sink_commits_total":            {"pipeline", "sink"},
		"sluice_sink_bytes_total":              {"pipeline", "sink"},
		"sluice_sink_files_total":              {"pipeline", "sink"},
		"sluice_last_commit_timestamp_seconds": {"pipeline", "sink"},
		"sluice_commit_duration_seconds_count": {"pipeline", "sink"},
		"sluice_freshness_seconds_count":       {"pipeline", "sink"},
		"sluice_epoch_latency_seconds_count":   {"pipeline"},
		"sluice_kafka_fetch_bytes_total":       {"node_id", "pipeline", "sink", "source", "topic"},
		"sluice_kafka_produce_bytes_total":     {"node_id", "pipeline", "sink", "source", "topic"},
		"sluice_kafka_connects_total":          {"node_id", "pipeline", "sink", "source"},
	}
	missing := func(body string) []string {
		var out []string
		for name, labels := range want {
			found := false
			for _, line := range strings.Split(body, "\n") {
				rest, ok := strings.CutPrefix(line, name+"{")
				if !ok {
					continue
				}
				found = true
				for _, l := range labels {
					found = found && strings.Contains(rest, l+`="`)
				}
				if found {
					break
				}
			}
			if !found {
				out = append(out, name)
			}
		}
		return out
	}
	deadline := time.Now().Add(15 * time.Second)
	var body string
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if len(missing(body)) == 0 && strings.Contains(body, `sluice_transform_error_rows_total{pipeline="observed",transform="ratio"}`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %v within 15 s:\n%s", missing(body), body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res := <-done
	if res.code != exitOK {
		t.Fatalf("sluice run exited %d:\n%s", res.code, res.stderr)
	}
	var starts, progress int
	for _, line := range strings.Split(res.stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		msg, _ := m["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "where the source starts") && m["source"] == "events":
			starts++
			if !strings.Contains(msg, "at the earliest offset") {
				t.Errorf("start line %q, want the earliest offset", msg)
			}
		case msg == "progress":
			progress++
			if src, ok := m["source_events"].(map[string]any); !ok || src["read"] == nil || src["lag"] == nil {
				t.Errorf("progress line without the source's reads and lag: %v", m)
			}
		}
	}
	if starts != 1 || progress < 3 {
		t.Errorf("%d start lines and %d progress lines in 4 s at 500 ms, want 1 and at least 3:\n%s", starts, progress, res.stderr)
	}
}
