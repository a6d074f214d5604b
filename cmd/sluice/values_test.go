package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/connectors/files"
)

// TestTextValuesArriveExactly: a text parameter's value reaches the rows a pipeline writes as
// exactly its characters, quoted in the template or not, and `sluice render` shows it so.
func TestTextValuesArriveExactly(t *testing.T) {
	for _, v := range []string{`a\x41b`, `|`, `null`, `123`, `it's`, "two\nlines", `# not a comment`} {
		dir := t.TempDir()
		p := filepath.Join(dir, "p.yaml")
		writeFile(t, p, `template:
  parameters:
    - name: v
      type: text
pipeline:
  type: chain
  transforms:
    - type: Create
      config:
        elements:
          - dq: "{{ v }}"
            plain: {{ v }}
    - type: WriteToJson
      config: {path: `+filepath.Join(dir, "out")+`}
`)
		code, out, errOut := sluice(t, "run", p, "-p", "v="+v)
		if code != exitOK {
			t.Fatalf("v=%q: exit %d\n%s%s", v, code, out, errOut)
		}
		lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
		if err != nil || len(lines) != 1 {
			t.Fatalf("v=%q: %d rows, %v", v, len(lines), err)
		}
		var row map[string]any
		if err := json.Unmarshal(lines[0], &row); err != nil {
			t.Fatal(err)
		}
		if row["dq"] != v || row["plain"] != v {
			t.Errorf("v=%q arrives as %s", v, lines[0])
		}
		code, out, errOut = sluice(t, "render", p, "-p", "v="+v)
		if code != exitOK {
			t.Fatalf("render v=%q: exit %d\n%s", v, code, errOut)
		}
		want, _ := json.Marshal(v)
		if !strings.Contains(out, "dq: "+string(want)) && !strings.Contains(out, `dq: "`+v+`"`) && !strings.Contains(out, `dq: '`+v+`'`) {
			t.Errorf("render v=%q shows:\n%s", v, out)
		}
	}
}

// passwordPipeline writes a template with a password parameter whose last transform,
// LogForTesting, ends with the lines logTail.
func passwordPipeline(t *testing.T, logTail string) string {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, `template:
  parameters:
    - name: password
      type: password
pipeline:
  type: chain
  transforms:
    - type: Create
      config: {elements: [{a: 1}]}
    - type: LogForTesting
`+logTail)
	return p
}

// TestPasswordOnCommandLineWarns: a password given with -p is visible in ps: sluice says so
// (without the value) and suggests ${env:NAME} or ${file:PATH}.
func TestPasswordOnCommandLineWarns(t *testing.T) {
	p := passwordPipeline(t, `      name: "x{{ password }}"
`)
	for _, cmd := range []string{"render", "validate"} {
		_, _, errOut := sluice(t, cmd, p, "-p", "password=hunter2-Pw")
		if !strings.Contains(errOut, `warning: the value of password parameter "password" is given with -p`) ||
			!strings.Contains(errOut, "'password=${env:NAME}'") || !strings.Contains(errOut, "'password=${file:PATH}'") ||
			strings.Contains(errOut, "hunter2") {
			t.Errorf("%s: want a warning without the value:\n%s", cmd, errOut)
		}
		t.Setenv("SLUICE_TEST_PW", "hunter2-Pw")
		if _, _, errOut := sluice(t, cmd, p, "-p", "password=${env:SLUICE_TEST_PW}"); strings.Contains(errOut, "warning") {
			t.Errorf("%s: a reference needs no warning:\n%s", cmd, errOut)
		}
	}
}

// TestOneLetterPasswordGarblesNothing: with the password "p", validation errors show the
// password's mask where it is and are otherwise as written.
func TestOneLetterPasswordGarblesNothing(t *testing.T) {
	p := passwordPipeline(t, `      config:
        level: "{{ password }}"
    - type: MapToFeilds
`)
	t.Setenv("SLUICE_TEST_ONE", "p")
	code, out, errOut := sluice(t, "validate", p, "-p", "password=${env:SLUICE_TEST_ONE}")
	if code != exitInvalid {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{`:12:16: "level" must be one of`, `not "<secret:password>"`, `:13:13: unknown transform type "MapToFeilds" (did you mean "MapToFields"?)`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("errors lack %q:\n%s", want, errOut)
		}
	}
	if strings.Count(errOut, "<secret") != 1 || strings.Contains(errOut, `"p"`) {
		t.Errorf("errors garbled or show the password:\n%s", errOut)
	}
}
