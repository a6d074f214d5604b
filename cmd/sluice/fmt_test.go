package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	unformatted = "pipeline:\n    type: chain   # a chain\n    transforms:\n    - type: Create\n      config: {elements: [1]}\n"
	formatted   = "pipeline:\n  type: chain # a chain\n  transforms:\n    - type: Create\n      config: {elements: [1]}\n"
)

// writeFiles writes name -> content files into a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFmtCheck(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.yaml": unformatted, "good.yaml": formatted})
	bad, good := filepath.Join(dir, "bad.yaml"), filepath.Join(dir, "good.yaml")

	code, out, errOut := sluice(t, "fmt", "--check", bad, good)
	if code != exitInvalid || out != bad+"\n" || errOut != "" {
		t.Errorf("fmt --check: exit %d, stdout %q, stderr %q; want 1 and only %s listed", code, out, errOut, bad)
	}
	if readFile(t, bad) != unformatted {
		t.Error("fmt --check changed a file")
	}
	if code, out, _ := sluice(t, "fmt", "--check", good); code != exitOK || out != "" {
		t.Errorf("fmt --check on a formatted file: exit %d, stdout %q", code, out)
	}
	// A directory stands for the YAML files under it.
	if code, out, _ := sluice(t, "fmt", "--check", dir); code != exitInvalid || out != bad+"\n" {
		t.Errorf("fmt --check DIR: exit %d, stdout %q", code, out)
	}
}

func TestFmtRewritesInPlace(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": unformatted})
	path := filepath.Join(dir, "p.yaml")
	if code, out, errOut := sluice(t, "fmt", path); code != exitOK || out != "" || errOut != "" {
		t.Fatalf("fmt: exit %d\n%s%s", code, out, errOut)
	}
	if got := readFile(t, path); got != formatted {
		t.Errorf("fmt wrote:\n%s\nwant:\n%s", got, formatted)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("the file's permissions changed: %v %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("fmt left files behind: %v", entries)
	}
	if code, out, _ := sluice(t, "fmt", "--check", path); code != exitOK || out != "" {
		t.Errorf("fmt --check after fmt: exit %d, stdout %q", code, out)
	}
}

func TestFmtDiff(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": unformatted})
	path := filepath.Join(dir, "p.yaml")
	code, out, errOut := sluice(t, "fmt", "--diff", path)
	want := "--- " + path + ".orig\n+++ " + path + "\n" +
		"@@ -1,5 +1,5 @@\n pipeline:\n-    type: chain   # a chain\n-    transforms:\n+  type: chain # a chain\n+  transforms:\n" +
		"     - type: Create\n       config: {elements: [1]}\n"
	if code != exitOK || out != want || errOut != "" {
		t.Errorf("fmt --diff: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	if readFile(t, path) != unformatted {
		t.Error("fmt --diff changed the file")
	}
	if code, out, _ := sluice(t, "fmt", "--check", "--diff", path); code != exitInvalid || out != want {
		t.Errorf("fmt --check --diff: exit %d, stdout:\n%s", code, out)
	}
}

func TestFmtErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"broken.yaml": "pipeline:\n  transforms:\n    - type: Create\n      config:\n        elements: [{id: 1}\n    - type: Filter\n",
		"tabs.yaml":   "pipeline:\n\ttype: chain\n",
		"ok.yaml":     unformatted,
	})
	broken, tabs, ok := filepath.Join(dir, "broken.yaml"), filepath.Join(dir, "tabs.yaml"), filepath.Join(dir, "ok.yaml")
	code, _, errOut := sluice(t, "fmt", broken, tabs, ok)
	if code != exitRuntime {
		t.Errorf("exit %d, want %d", code, exitRuntime)
	}
	for _, want := range []string{
		broken + ":4:7: invalid YAML: did not find expected ',' or ']'",
		tabs + ":2:1: tab character in the indentation",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if readFile(t, ok) != formatted {
		t.Error("a valid file given with broken ones was not formatted")
	}
	if code, _, _ := sluice(t, "fmt"); code != exitUsage {
		t.Errorf("fmt without files: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := sluice(t, "fmt", filepath.Join(dir, "missing.yaml")); code != exitRuntime {
		t.Errorf("fmt on a missing file: exit %d, want %d", code, exitRuntime)
	}
}

func TestFmtLeavesJinjaTemplates(t *testing.T) {
	root := repoRoot(t)
	for _, path := range []string{
		filepath.Join(root, "examples", "templates", "kafka_to_kafka.yaml"),
		filepath.Join(root, "templates", "builtin", "Kafka_To_Kafka.yaml"),
	} {
		code, out, errOut := sluice(t, "fmt", "--check", path)
		if code != exitOK || out != "" || !strings.Contains(errOut, path+": not formatted: Jinja template") {
			t.Errorf("fmt --check %s: exit %d, stdout %q, stderr %q", path, code, out, errOut)
		}
	}
}

// TestFmtExamples formats a copy of every example through the command line: the second run
// finds nothing to change.
func TestFmtExamples(t *testing.T) {
	src := filepath.Join(repoRoot(t), "examples")
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		return os.WriteFile(filepath.Join(dir, strings.ReplaceAll(rel, string(filepath.Separator), "_")), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := sluice(t, "fmt", dir); code != exitOK {
		t.Fatalf("fmt examples: exit %d\n%s", code, errOut)
	}
	if code, out, _ := sluice(t, "fmt", "--check", dir); code != exitOK || out != "" {
		t.Errorf("fmt --check after fmt: exit %d, would change:\n%s", code, out)
	}
}

func TestFmtStdin(t *testing.T) {
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader(unformatted)
	if code, out, _ := sluice(t, "fmt", "-"); code != exitOK || out != formatted {
		t.Errorf("fmt -: exit %d, stdout:\n%s", code, out)
	}
	stdin = strings.NewReader(unformatted)
	if code, out, _ := sluice(t, "fmt", "--check", "-"); code != exitInvalid || out != "<stdin>\n" {
		t.Errorf("fmt --check -: exit %d, stdout %q", code, out)
	}
}
