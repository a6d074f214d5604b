package acceptance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOneLogStream: with --log-format json every line sluice run writes on stderr is a JSON
// object, whatever the run meets: a schema registry that is down when the pipeline is
// validated; a BigQuery that is down at start (waited for, then given up); a Kafka broker
// that goes away and comes back under a pipeline that prints from Python and writes to
// Iceberg and to BigQuery (`sluice dev bigquery`); the messages that end a run included.
func TestOneLogStream(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	down := freeAddr(t)

	registry := filepath.Join(dir, "registry.yaml")
	writeFile(t, registry, fmt.Sprintf(`pipeline:
  - type: ReadFromKafka
    config: {bootstrap_servers: '%s', topic: t, format: AVRO, confluent_schema_registry_url: 'http://%s'}
  - {type: WriteToJson, input: ReadFromKafka, config: {path: %s}}
`, down, down, filepath.Join(dir, "out")))
	code, _, errOut := sluice(t, "run", registry, "--log-format", "json")
	if code != 1 || !strings.Contains(errOut, `"level":"WARN","msg":"cannot reach schema registry http://`+down) {
		t.Errorf("a registry that is down at validation: exit %d, want 1 and its WARN:\n%s", code, errOut)
	}
	onlyJSON(t, "a registry that is down", errOut)

	bqDown := filepath.Join(dir, "bqdown.yaml")
	writeFile(t, bqDown, fmt.Sprintf(`pipeline:
  - {type: Create, config: {elements: [{id: 1}]}}
  - {type: WriteToBigQuery, input: Create, config: {table: 'dev-project.shop.t', endpoint: 'http://%s', storage_endpoint: '%s'}}
`, down, down))
	code, _, errOut = sluice(t, "run", bqDown, "--log-format", "json", "--startup-timeout", "1s")
	if code != exitRuntime || !strings.Contains(errOut, "cannot reach a service that WriteToBigQuery needs; trying again for up to 1s") ||
		!strings.Contains(errOut, "read table dev-project.shop.t from the BigQuery API at http://"+down) {
		t.Errorf("a BigQuery that is down at start: exit %d, want %d, the wait and what was not reached:\n%s", code, exitRuntime, errOut)
	}
	onlyJSON(t, "a BigQuery that is down", errOut)

	addr, data := freeAddr(t), t.TempDir()
	broker := startDevKafka(t, "--listen", addr, "--data-dir", data, "--topic", "logs_in:2")
	produceIDs(t, addr, "logs_in", 0, 50)
	_, _, endpoint, storage := startDevBigQuery(t, "dev-project:shop")
	w := icebergWarehouse{dir: dir}
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, fmt.Sprintf(`pipeline:
  - type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: logs_in
      format: JSON
      auto_offset_reset_config: earliest
      schema: {type: object, properties: {id: {type: integer}, name: {type: string}, amount: {type: number}}}
  - type: MapToFields
    input: ReadFromKafka
    config:
      language: python
      append: true
      fields:
        doubled:
          callable: |
            def doubled(row):
              if row.id == 7:
                print("python prints", row.id)
              return row.amount * 2
  - type: WriteToIceberg
    input: MapToFields
    config:
      table: db.logs
      triggering_frequency_seconds: 1
      catalog_properties: {type: sql, uri: '%s', warehouse: '%s'}
  - type: WriteToBigQuery
    input: MapToFields
    config: {table: 'dev-project.shop.logs', endpoint: '%s', storage_endpoint: '%s'}
options:
  checkpoint_interval: 300ms
`, addr, w.catalogDB(), w.root(), endpoint, storage))
	// The summary goes to stdout; stderr is the log, with franz-go's own lines in it.
	c := &runningCopy{name: "run"}
	c.cmd = exec.Command(binary, "run", pipeline, "--log-format", "json", "--outage-log-interval", "1s")
	c.cmd.Env = append(os.Environ(), "SLUICE_KAFKA_CLIENT_LOG=info")
	c.cmd.Stderr = c
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	c.waitFor(t, `"msg":"python prints 7"`, 30*time.Second)
	c.waitFor(t, "created BigQuery table", 30*time.Second)
	if err := broker.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = broker.cmd.Wait()
	c.waitFor(t, "cannot reach Kafka broker "+addr, 20*time.Second)
	startDevKafka(t, "--listen", addr, "--data-dir", data)
	c.waitFor(t, "connection to Kafka broker "+addr+" restored after", 30*time.Second)
	c.stop(t, syscall.SIGTERM)
	l := c.log()
	if !strings.Contains(l, `"library":"franz-go"`) {
		t.Errorf("no line of franz-go's own (SLUICE_KAFKA_CLIENT_LOG=info) in the log:\n%s", l)
	}
	onlyJSON(t, "a broker that goes away", l)
}

// onlyJSON fails t for each line of stderr that is not a JSON object.
func onlyJSON(t *testing.T, what, stderr string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("%s: --log-format json wrote a line that is not JSON: %q", what, line)
		}
	}
}
