package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBeamTestFiles: validate and test take files in Beam's test format (docs/testing.md).
func TestBeamTestFiles(t *testing.T) {
	fails := filepath.Join(repoRoot(t), "testdata", "beam", "tests", "assert_equal_fails.yaml")
	code, out, errOut := sluice(t, "validate", fails)
	if code != exitOK || !strings.Contains(out, "valid (3 pipelines)") {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = sluice(t, "test", fails)
	for _, want := range []string{
		"ok   pipeline 1 (", "assert_equal_fails.yaml:5:5)\n",
		"FAIL pipeline 2 (", "assert_equal_fails.yaml:21:11): firing windows: the input is not the expected elements:\n" +
			"      3 arrived, 3 expected\n      - expected, not there:\n        {\"word\":\"c\",\"n\":3}\n" +
			"      + there, not expected:\n        {\"word\":\"b\",\"n\":2}\n",
		"assert_equal_fails.yaml: 1 passed, 1 failed, 1 not run\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("test output lacks %q:\n%s", want, out)
		}
	}
	if code != exitInvalid {
		t.Errorf("test: exit %d, want %d\n%s", code, exitInvalid, errOut)
	}

	path := filepath.Join(t.TempDir(), "t.yaml")
	writeFile(t, path, "fixtures:\n  - name: DB\n    type: mydb.Server\npipelines:\n  - pipeline:\n      transforms:\n        - type: Create\n          config: {elements: [1]}\n")
	for _, cmd := range []string{"validate", "test"} {
		code, _, errOut := sluice(t, cmd, path)
		if want := `t.yaml:3:11: fixture DB: sluice cannot provide the type "mydb.Server"`; code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, want %d and %s:\n%s", cmd, code, exitInvalid, want, errOut)
		}
	}
}
