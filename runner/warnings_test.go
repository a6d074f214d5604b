package runner_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runner"
)

// Settings sluice accepts but does not use are warnings with positions, not errors.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: embedded
      topic: t
      format: STRING
      consumer_config: {fancy.setting: "1"}
    resource_hints: {min_ram: 1GB}
  sink:
    type: WriteToJson
    config: {path: out}
options:
  sdk_harness_threads: 4
labels: [a]
`)
	p, err := runner.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range p.Warnings {
		got = append(got, strings.TrimPrefix(w.Error(), path+":"))
	}
	want := []string{
		`9:40: ReadFromKafka: consumer_config "fancy.setting" is not a property sluice uses; it is ignored (see docs/kafka.md)`,
		`10:21: resource_hints are ignored: sluice runs in one process`,
		`15:3: unknown option "sdk_harness_threads" is ignored`,
		`16:1: unknown top-level key "labels" is ignored`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
