package main

import (
	"testing"

	_ "github.com/sluicehq/sluice/connectors/all"
	"github.com/sluicehq/sluice/runner"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// TestScenarioPipelinesValidate loads every scenario's pipeline as `sluice validate` does
// (offline): a pipeline the harness writes wrong fails every run of its scenario, which a
// full bench run only shows after minutes.
func TestScenarioPipelinesValidate(t *testing.T) {
	e := &env{addr: "127.0.0.1:9092", dir: t.TempDir(), trigger: "2s",
		bq: &bigQueryServer{endpoint: "http://127.0.0.1:9050", storage: "127.0.0.1:9060"}}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			path, _, err := e.pipeline(s, 0, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := runner.LoadWith(path, runner.LoadOptions{Offline: true}); err != nil {
				t.Errorf("%s does not validate: %v", s.name, err)
			}
		})
	}
}
