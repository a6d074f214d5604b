package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice runs the CLI in-process and returns its exit code, stdout and stderr.
func sluice(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// repoRoot returns the repository root, where examples/ and testdata/ are.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		code, out, errOut := sluice(t, "validate", f)
		if code != exitOK || !strings.Contains(out, "valid") {
			t.Errorf("sluice validate %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
}

func TestExitCodes(t *testing.T) {
	bad := filepath.Join(repoRoot(t), "testdata", "bad", "unknown_transform.yaml")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, exitUsage, "Usage:"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"valdate"}, exitUsage, `did you mean "validate"?`},
		{[]string{"validate"}, exitUsage, "usage: sluice validate"},
		{[]string{"validate", bad}, exitInvalid, bad + `:7:13: unknown transform type "MapToFeilds" (did you mean "MapToFields"?)`},
		{[]string{"run", bad}, exitInvalid, "unknown transform type"},
		{[]string{"run", "does-not-exist.yaml"}, exitInvalid, "cannot read the pipeline file"},
		{[]string{"graph", bad}, exitInvalid, "MapToFeilds"},
		{[]string{"run", "--nope", "x.yaml"}, exitUsage, "flag provided but not defined: -nope"},
		{[]string{"--version"}, exitOK, "sluice "},
	}
	for _, c := range cases {
		code, out, errOut := sluice(t, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("sluice %s: exit %d, want %d; output must contain %q:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errOut)
		}
	}
}

func TestGraph(t *testing.T) {
	qs := filepath.Join(repoRoot(t), "examples", "quickstart.yaml")
	code, dot, errOut := sluice(t, "graph", qs)
	if code != exitOK || !strings.HasPrefix(dot, "digraph pipeline {") || !strings.Contains(dot, `[label="malformed", style=dashed, color=red]`) {
		t.Fatalf("graph: exit %d\n%s%s", code, dot, errOut)
	}
	code, mm, _ := sluice(t, "graph", "--format", "mermaid", qs)
	if code != exitOK || !strings.HasPrefix(mm, "flowchart LR") || !strings.Contains(mm, "-.->|malformed|") {
		t.Fatalf("mermaid: exit %d\n%s", code, mm)
	}
}

func TestSchemaListsEveryComponent(t *testing.T) {
	code, out, _ := sluice(t, "schema")
	if code != exitOK {
		t.Fatalf("schema: exit %d", code)
	}
	for _, name := range []string{"MapToFields", "Filter", "ReadFromJson", "WriteToJson", "checkpoint_interval", "error_handling"} {
		if !strings.Contains(out, `"`+name+`"`) {
			t.Errorf("sluice schema does not mention %s", name)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
