package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/tools/diff"
)

var updateDiff = flag.Bool("update", false, "rewrite the golden files of sluice diff (testdata/diff/*/want.txt)")

// diffVerdicts is the exit code of every case in testdata/diff: what a rollout gate sees.
var diffVerdicts = map[string]int{
	"identical":               exitOK,
	"filter_added":            exitOK,
	"field_added":             exitOK,
	"expression_changed":      exitOK,
	"field_type_changed":      exitOK,
	"topic_added":             exitOK,
	"delivery_changed":        exitOK,
	"name_changed":            exitOK,
	"renamed":                 exitOK,
	"template":                exitOK,
	"topic_changed":           exitIncompatible,
	"group_changed":           exitIncompatible,
	"table_changed":           exitIncompatible,
	"window_changed":          exitIncompatible,
	"kafka_sink_renamed":      exitIncompatible,
	"name_changed_files_sink": exitIncompatible,
}

// TestDiffGolden runs sluice diff on every testdata/diff/CASE: old.yaml, new.yaml and, in
// CASE/args, further arguments one a line; the output must be CASE/want.txt (go test -run
// DiffGolden -update rewrites them) and the exit code the case's verdict.
func TestDiffGolden(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "diff", "*"))
	if len(dirs) < len(diffVerdicts) {
		t.Fatalf("%d cases in testdata/diff, want at least %d", len(dirs), len(diffVerdicts))
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			want, ok := diffVerdicts[name]
			if !ok {
				t.Fatalf("no verdict for testdata/diff/%s in diffVerdicts", name)
			}
			args := []string{"diff", filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")}
			if extra, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
				args = append(args, strings.Fields(string(extra))...)
			}
			code, out, errOut := sluice(t, args...)
			if code != want {
				t.Errorf("exit %d, want %d\n%s%s", code, want, out, errOut)
			}
			if (code == exitIncompatible) != strings.Contains(out, "verdict: incompatible") {
				t.Errorf("exit %d does not match the verdict:\n%s", code, out)
			}
			golden(t, filepath.Join(dir, "want.txt"), out)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *updateDiff {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run DiffGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run DiffGolden -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDiffStreams: the old file may come from standard input (-) or a stream such as
// <(git show HEAD~1:pipeline.yaml); it then stands at the new file's path, so a pipeline
// without options.name keeps the new file's name and relative includes resolve there.
func TestDiffStreams(t *testing.T) {
	dir := filepath.Join("testdata", "diff", "topic_changed")
	want := strings.ReplaceAll(readTestFile(t, filepath.Join(dir, "want.txt")), "\r", "")
	old := readTestFile(t, filepath.Join(dir, "old.yaml"))

	stdin = strings.NewReader(old)
	t.Cleanup(func() { stdin = os.Stdin })
	code, out, errOut := sluice(t, "diff", "-", filepath.Join(dir, "new.yaml"))
	if code != exitIncompatible || out != want {
		t.Errorf("from stdin: exit %d\n%s%s", code, out, errOut)
	}

	if _, err := os.Stat("/dev/fd"); err == nil {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			w.WriteString(old)
			w.Close()
		}()
		code, out, errOut = sluice(t, "diff", fmt.Sprintf("/dev/fd/%d", r.Fd()), filepath.Join(dir, "new.yaml"))
		if code != exitIncompatible || out != want {
			t.Errorf("from /dev/fd: exit %d\n%s%s", code, out, errOut)
		}
	}

	// Neither file names the pipeline, and the new one includes a file next to it.
	tmp := t.TempDir()
	writeFile(t, filepath.Join(tmp, "sink.yaml"), "    - type: WriteToJson\n      name: out\n      config:\n        path: out/words\n")
	src := "pipeline:\n  type: chain\n  transforms:\n    - type: Create\n      config:\n        elements: [{word: a}]\n{% include \"sink.yaml\" %}\n"
	writeFile(t, filepath.Join(tmp, "words.yaml"), src)
	stdin = strings.NewReader(src)
	code, out, errOut = sluice(t, "diff", "-", filepath.Join(tmp, "words.yaml"))
	if code != exitOK || !strings.HasPrefix(out, "no differences\n") {
		t.Errorf("stdin standing at the new file's path: exit %d\n%s%s", code, out, errOut)
	}
}

func TestDiffJSON(t *testing.T) {
	dir := filepath.Join("testdata", "diff", "window_changed")
	code, out, errOut := sluice(t, "diff", "--json", filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml"))
	if code != exitIncompatible {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var d diff.Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d.Verdict.Compatible || !d.Verdict.StateAssumed || len(d.Verdict.WaysOut) != 3 {
		t.Errorf("verdict %+v", d.Verdict)
	}
	if len(d.Transforms) != 1 || d.Transforms[0].Name != "per_user" || len(d.Transforms[0].Changes) != 1 ||
		d.Transforms[0].Changes[0].Key != "windowing" || !strings.Contains(string(d.Transforms[0].Changes[0].New), `"5m"`) {
		t.Errorf("transforms %+v", d.Transforms)
	}
	if d.Schemas == nil || d.IO == nil || d.Options == nil {
		t.Errorf("empty sections must be [], not null:\n%s", out)
	}
}

func TestDiffQuiet(t *testing.T) {
	dir := filepath.Join("testdata", "diff", "group_changed")
	code, out, _ := sluice(t, "diff", "--quiet", filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml"))
	if code != exitIncompatible || !strings.HasPrefix(out, "verdict: incompatible") || strings.Contains(out, "sources and sinks:") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestDiffSecrets: a password parameter's value never shows, not even where it changed.
func TestDiffSecrets(t *testing.T) {
	tmp := t.TempDir()
	tpl := func(password string) string {
		return `template:
  name: t
  parameters:
    - {name: pw, type: password, required: true}
pipeline:
  type: chain
  transforms:
    - type: ReadFromKafka
      config:
        bootstrap_servers: localhost:9092
        topic: orders
        format: RAW
        consumer_config:
          security.protocol: SASL_PLAINTEXT
          sasl.mechanism: PLAIN
          sasl.username: u
          sasl.password: "` + password + `"
    - type: WriteToJson
      config:
        path: out/orders
`
	}
	writeFile(t, filepath.Join(tmp, "old.yaml"), tpl("{{ pw }}"))
	writeFile(t, filepath.Join(tmp, "new.yaml"), tpl("{{ pw }}-2"))
	for _, format := range []string{"--quiet=false", "--json"} {
		code, out, errOut := sluice(t, "diff", filepath.Join(tmp, "old.yaml"), filepath.Join(tmp, "new.yaml"), "-p", "pw=hunter2", format)
		if code != exitOK || strings.Contains(out+errOut, "hunter2") || !strings.Contains(out, "sasl.password") {
			t.Errorf("%s: exit %d\n%s%s", format, code, out, errOut)
		}
	}
}

func TestDiffErrors(t *testing.T) {
	ok := filepath.Join("testdata", "diff", "identical", "old.yaml")
	bad := filepath.Join(repoRoot(t), "testdata", "bad", "unknown_transform.yaml")
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"one file", "", []string{ok}, exitUsage, "usage: sluice diff OLD.yaml NEW.yaml"},
		{"three files", "", []string{ok, ok, ok}, exitUsage, "usage: sluice diff"},
		{"stdin twice", "", []string{"-", "-"}, exitUsage, "usage: sluice diff"},
		{"unknown flag", "", []string{"--nope", ok, ok}, exitUsage, "flag provided but not defined: -nope"},
		{"missing file", "", []string{ok, "does-not-exist.yaml"}, exitInvalid, "cannot read the pipeline file"},
		{"invalid old", "", []string{bad, ok}, exitInvalid, bad + `:7:13: unknown transform type "MapToFeilds"`},
		{"invalid new", "", []string{ok, bad}, exitInvalid, bad + `:7:13: unknown transform type "MapToFeilds"`},
		{"invalid stdin", "pipeline:\n  - type: Nope\n", []string{"-", ok}, exitInvalid, `<stdin>:2:11: unknown transform type "Nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdin = strings.NewReader(c.stdin)
			t.Cleanup(func() { stdin = os.Stdin })
			code, out, errOut := sluice(t, append([]string{"diff"}, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, want %d; stderr must contain %q:\n%s%s", code, c.code, c.want, out, errOut)
			}
		})
	}
}
