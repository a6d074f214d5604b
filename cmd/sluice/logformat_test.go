package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// With --log-format json every line on stderr is a JSON object, the rows LogForTesting logs
// included; with text none is. A bad format is a usage error.
func TestLogFormat(t *testing.T) {
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, `pipeline:
  type: chain
  transforms:
    - type: Create
      config: {elements: [{n: 1}, {n: 2}]}
    - type: LogForTesting
`)
	code, _, errOut := sluice(t, "run", pipeline, "--log-format", "json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json wrote a line that is not JSON: %q", line)
		}
		if strings.HasPrefix(rec["msg"].(string), `{"n":`) {
			rows++
		}
	}
	if rows != 2 {
		t.Errorf("LogForTesting's 2 rows are %d JSON log lines:\n%s", rows, errOut)
	}
	// What ends a run is in the stream too: each config problem an ERROR record.
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "pipeline:\n  type: chain\n  transforms:\n    - {type: Create, config: {elements: [{n: 1}], amout: 1}}\n    - {type: Filtr}\n")
	code, _, errOut = sluice(t, "run", bad, "--log-format", "json")
	problems := 0
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json wrote a line that is not JSON for a bad pipeline: %q", line)
		} else if rec["level"] == "ERROR" && strings.HasPrefix(rec["msg"].(string), bad+":") {
			problems++
		}
	}
	if code != exitInvalid || problems != 2 {
		t.Errorf("a pipeline with 2 problems: exit %d, %d ERROR records with a position:\n%s", code, problems, errOut)
	}
	code, _, errOut = sluice(t, "run", pipeline, "--log-format", "text")
	if code != exitOK || strings.Contains(errOut, `{"time"`) || !strings.Contains(errOut, "level=INFO") {
		t.Errorf("--log-format text: exit %d, want text lines only:\n%s", code, errOut)
	}
	if code, _, errOut := sluice(t, "run", pipeline, "--log-format", "xml"); code != exitUsage || !strings.Contains(errOut, `--log-format "xml": write json or text`) {
		t.Errorf("--log-format xml: exit %d\n%s", code, errOut)
	}
}
