package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
)

// TestTemplatePositions: problems in a rendered template are reported at the template file's
// lines, and secret values never appear in them.
func TestTemplatePositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	src := `template:
  parameters:
    - name: debug
      type: boolean
      default: "false"
    - name: level
      type: password
pipeline:
  type: chain
  transforms:
    - type: Create
      config: {elements: [{a: 1}]}
{% if debug == "true" %}
    - type: LogForTesting
      config: {level: DEBUG}
{% endif %}
    - type: LogForTesting
      config:
        level: {{ level }}
    - type: MapToFeilds
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runner.LoadWith(path, runner.LoadOptions{Params: []templates.Param{{Name: "level", Value: "verbose-secret"}}})
	if err == nil {
		t.Fatal("the template loaded, but it is broken")
	}
	got := err.Error()
	for _, want := range []string{
		path + `:19:16: "level" must be one of`,
		path + `:20:13: unknown transform type "MapToFeilds" (did you mean "MapToFields"?)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "verbose-secret") {
		t.Errorf("errors show the secret:\n%s", got)
	}

	_, err = runner.LoadWith(path, runner.LoadOptions{Params: []templates.Param{
		{Name: "level", Value: "INFO"}, {Name: "debug", Value: "true"}}})
	if err == nil || !strings.Contains(err.Error(), path+":20:13: unknown transform type") {
		t.Fatalf("want the unknown type at line 20 whatever the blocks render: %v", err)
	}
}
