package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/templates"
)

// TestTellAs: problems are told as the masked copy tells them at their position; one only the
// real values cause is told without its text.
func TestTellAs(t *testing.T) {
	at := func(line int) diag.Pos { return diag.Pos{File: "p.yaml", Line: line, Col: 3} }
	real := diag.List{
		{Pos: at(1), Summary: `"level" must be one of INFO, not "p"`},
		{Pos: at(2), Summary: `unknown transform type "MapToFeilds"`},
		{Pos: at(3), Summary: `bad value "p"`},
	}
	shown := diag.List{
		{Pos: at(2), Summary: `unknown transform type "MapToFeilds"`},
		{Pos: at(1), Summary: `"level" must be one of INFO, not "<secret:pw>"`},
	}
	got := tellAs(real, shown)
	if got[0].Summary != shown[1].Summary || got[1].Summary != real[1].Summary ||
		strings.Contains(got[2].Summary, `"p"`) || got[2].Pos != at(3) {
		t.Errorf("tellAs: %v", got)
	}
}

// TestSecretValidOnlyAsItself: a secret that is a valid value loads, though its mask would
// not be one: the masked copy only tells problems, it finds none.
func TestSecretValidOnlyAsItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(`template:
  parameters:
    - name: level
      type: password
pipeline:
  type: chain
  transforms:
    - type: Create
      config: {elements: [{a: 1}]}
    - type: LogForTesting
      config:
        level: {{ level }}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadWith(path, LoadOptions{Params: []templates.Param{{Name: "level", Value: "INFO"}}})
	if err != nil || len(p.Warnings) > 0 {
		t.Fatalf("a valid secret must load: %v %v", err, p.Warnings)
	}
}
