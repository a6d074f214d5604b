package templates

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// write writes files into a temporary directory and returns the path of the first.
func write(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i+1 < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, files[0])
}

func render(t *testing.T, path string, in Input) (*Result, error) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Render(path, src, in)
}

// problems returns the problems of err as "line:col: summary".
func problems(t *testing.T, path string, err error) []string {
	t.Helper()
	var list diag.List
	if !errors.As(err, &list) {
		t.Fatalf("want positioned problems, got %v", err)
	}
	var out []string
	for _, d := range list {
		if d.File != path {
			t.Errorf("problem names file %q, want %q", d.File, path)
		}
		out = append(out, strings.TrimPrefix(d.Pos.String(), path+":")+": "+d.Summary)
	}
	return out
}

func params(kv ...string) Input {
	var in Input
	for i := 0; i+1 < len(kv); i += 2 {
		in.Params = append(in.Params, Param{Name: kv[i], Value: kv[i+1], From: "-p"})
	}
	return in
}

// value returns the scalar at a dotted path (list indexes as numbers) of a rendered document.
func value(t *testing.T, r *Result, path string) (string, bool) {
	t.Helper()
	doc := r.Doc
	if doc == nil {
		doc = &yaml.Node{}
		if err := yaml.Unmarshal(r.Source, doc); err != nil {
			t.Fatal(err)
		}
	}
	n := doc.Content[0]
	for _, k := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			next = mappingValue(n, k)
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if k == string(rune('0'+i)) {
					next = c
				}
			}
		}
		if next == nil {
			return "", false
		}
		n = next
	}
	return n.Value, true
}

func TestFileWithoutJinjaIsUnchanged(t *testing.T) {
	src := "pipeline:\n  transforms: [{type: Create, config: {elements: [{a: '{x}'}]}}]  # {not jinja}\n"
	r, err := Render("p.yaml", []byte(src), params("unused", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Source) != src || r.Doc != nil || r.Line(2) != 2 {
		t.Errorf("a file without Jinja must load as it is; got %q", r.Source)
	}
}

func TestJinja(t *testing.T) {
	path := write(t,
		"p.yaml", `{% extends "base.yaml" %}
{% block transforms %}
{% import "macros.yaml" as m %}
{% for t in topics %}
    - {{ m.read(t) }}
{% endfor %}
    - type: LogForTesting
      name: {{ name | default('log') | upper }}
      config: {level: {{ level | lower }}, extra: {{ extra | tojson }}}
{% include "inc.yaml" %}
{% endblock %}
`,
		"base.yaml", "pipeline:\n  transforms:\n{% block transforms %}{% endblock %}\n",
		"macros.yaml", "{% macro read(t) %}{type: ReadFromKafka, name: {{ t }}}{% endmacro %}",
		"inc.yaml", "    - type: Flatten\n      name: {{ 'inc' ~ level | lower }}\n")
	in := Input{JinjaVariables: map[string]any{"topics": []any{"a", "b"}, "level": "INFO", "extra": map[string]any{"k": int64(1)}}}
	r, err := render(t, path, in)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"pipeline.transforms.0.name":         "a",
		"pipeline.transforms.1.name":         "b",
		"pipeline.transforms.2.name":         "LOG",
		"pipeline.transforms.2.config.level": "info",
		"pipeline.transforms.3.name":         "incinfo",
	} {
		if got, _ := value(t, r, p); got != want {
			t.Errorf("%s = %q, want %q\n%s", p, got, want, r.Source)
		}
	}
	if got, _ := value(t, r, "pipeline.transforms.2.config.extra.k"); got != "1" {
		t.Errorf("tojson of a map must give a flow mapping: %s", r.Source)
	}
}

func TestUndefinedVariable(t *testing.T) {
	path := write(t, "p.yaml", "pipeline:\n  transforms:\n    - type: {{ kind }}\n      name: {{ nmae }}\n")
	_, err := render(t, path, Input{JinjaVariables: map[string]any{"kind": "Create", "name": "x"}})
	want := []string{`4:16: undefined variable "nmae" (did you mean "name"?)`}
	if got := problems(t, path, err); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTemplateSyntaxError(t *testing.T) {
	path := write(t, "p.yaml", "pipeline:\n  transforms:\n    - type: {{ kind \n")
	_, err := render(t, path, Input{JinjaVariables: map[string]any{"kind": "Create"}})
	got := problems(t, path, err)
	if len(got) != 1 || !strings.HasPrefix(got[0], "3:") || !strings.Contains(got[0], "invalid template") {
		t.Errorf("got %q", got)
	}
	if strings.Contains(err.Error(), "pipeline:") {
		t.Errorf("the error repeats the source: %v", err)
	}
}

// TestPositionsAfterBlocks: a YAML problem after {% if %} blocks is reported at the template's
// line, not the rendered text's.
func TestPositionsAfterBlocks(t *testing.T) {
	path := write(t, "p.yaml", `pipeline:
{% if a %}
  x: 1
  y: 2
{% endif %}
  transforms:
    - a
	- b
`)
	_, err := render(t, path, Input{JinjaVariables: map[string]any{"a": false}})
	got := problems(t, path, err)
	// yaml.v3 names the line before the tab: 4 of the rendered text, 7 of the template.
	if len(got) != 1 || !strings.HasPrefix(got[0], "7:") {
		t.Errorf("got %q, want a YAML error at line 7", got)
	}
}

const header = `template:
  name: T
  parameters:
    - name: topic
      required: true
    - name: port
      type: integer
    - name: ratio
      type: double
    - name: enabled
      type: boolean
    - name: props
      type: map
    - name: mode
      type: enum
      enum_options: [fast, safe]
    - name: bucket
      regexes: ["^[a-z]+$"]
    - name: format
    - name: schema
    - name: group
      default: sluice
    - name: pw
      type: password
`

func TestParameterValidation(t *testing.T) {
	path := write(t, "p.yaml", header+"pipeline: []\n")
	_, err := render(t, path, params("toppic", "x", "port", "80a", "ratio", "x", "enabled", "yes",
		"props", "{a: 1}", "mode", "fsat", "bucket", "B1", "pw", "hunter2"))
	want := []string{
		`3:3: unknown parameter "toppic" (did you mean "topic"?)`,
		`4:13: missing required parameter "topic"`,
		`6:13: parameter "port" must be an integer, not "80a"`,
		`8:13: parameter "ratio" must be a number, not "x"`,
		`10:13: parameter "enabled" must be true or false, not "yes"`,
		`12:13: parameter "props" must be a JSON object, e.g. {"key": "value"}, not "{a: 1}"`,
		`14:13: parameter "mode" must be one of fast, safe, not "fsat" (did you mean "fast"?)`,
		`17:13: parameter "bucket" must match ^[a-z]+$, not "B1"`,
	}
	if got := problems(t, path, err); !slices.Equal(got, want) {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestHeaderProblems(t *testing.T) {
	path := write(t, "p.yaml", `template:
  parameters:
    - name: a
      type: txt
    - name: b
      type: integer
      default: ten
    - name: a
    - help: no name
pipeline: []
`)
	_, err := render(t, path, Input{})
	want := []string{
		`4:13: unknown parameter type "txt" (did you mean "text"?)`,
		`7:16: the default of parameter "b" must be an integer, not "ten"`,
		`8:13: parameter "a" is declared twice (first at ` + path + `:3:13)`,
		`9:7: a parameter needs a name`,
	}
	if got := problems(t, path, err); !slices.Equal(got, want) {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestUnsetOptionalParameters: Dataflow removes every key and list item whose value is exactly
// an optional parameter that is not given and has no default.
func TestUnsetOptionalParameters(t *testing.T) {
	path := write(t, "p.yaml", header+`pipeline:
  transforms:
    - type: ReadFromKafka
      config:
        topic: {{ topic }}
        format: {{ format | default('JSON') }}
        group: {{ group }}
        port: {{ port }}
        servers: [a, {{ bucket }}, b]
        list:
          - {{ mode }}
          - kept
{% if schema %}
        schema: {{ schema }}
{% endif %}
`)
	r, err := render(t, path, params("topic", "t"))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"format": "JSON", "group": "sluice", "servers.1": "b", "list.0": "kept"} {
		if got, _ := value(t, r, "pipeline.transforms.0.config."+p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	for _, gone := range []string{"port", "schema", "servers.2", "list.1"} {
		if _, ok := value(t, r, "pipeline.transforms.0.config."+gone); ok {
			t.Errorf("%s must be removed", gone)
		}
	}
	shown := r.Display()
	if strings.Contains(shown, "unset") || !strings.Contains(shown, "        group: sluice\n        servers: [a, b]\n") {
		t.Errorf("the rendered file must not show unset parameters:\n%s", shown)
	}
}

func TestUnsetInsideAValue(t *testing.T) {
	path := write(t, "p.yaml", header+"pipeline:\n  name: pre-{{ format }}\n")
	_, err := render(t, path, params("topic", "t"))
	want := []string{`26:9: optional parameter "format" is not given and has no default, but the template uses it inside a value`}
	if got := problems(t, path, err); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNoStructureInjection: a value can set a value, never add or remove keys, transforms or
// list items, whatever it holds.
func TestNoStructureInjection(t *testing.T) {
	// Values the template transforms (upper) are read by YAML after rendering: they must keep
	// the structure. Values it prints as they are are placed (TestValuesArriveAsGiven).
	path := write(t, "p.yaml", header+`pipeline:
  transforms:
    - type: ReadFromKafka
      name: {{ topic | upper }}
      config:
        topic: {{ topic | upper }}
        quoted: "{{ format | upper }}"
        list: [{{ group | upper }}]
{% if schema %}
        schema: |
          {{ schema | indent(10) }}
{% endif %}
`)
	bad := map[string]string{
		"newline":        "t1\n    - type: Evil",
		"newline key":    "t1\n        evil: 1",
		"colon":          "a: b",
		"dash":           "- x",
		"brace":          "{a: 1}",
		"quote":          `x", "evil": "y`,
		"list separator": "a, b",
	}
	for name, v := range bad {
		t.Run(name, func(t *testing.T) {
			key := "topic"
			if name == "quote" {
				key = "format"
			}
			if name == "list separator" {
				key = "group"
			}
			in := params("topic", "ok", key, v)
			_, err := render(t, path, in)
			if err == nil {
				t.Fatalf("value %q of %s was rendered", v, key)
			}
			if !strings.Contains(err.Error(), `the value of parameter "`+key+`" would change the pipeline's structure`) {
				t.Errorf("the error must name the parameter: %v", err)
			}
		})
	}
	good := map[string]string{
		"schema": "{\"type\": \"object\",\n \"properties\": {\"a\": {\"type\": \"string\"}}}\n# a comment: - item",
		"format": "a: b, {c} #d",
		"topic":  "plain-topic.v1",
	}
	for k, v := range good {
		r, err := render(t, path, params("topic", "t", k, v))
		if err != nil {
			t.Errorf("%s=%q: %v", k, v, err)
			continue
		}
		p := map[string]string{"schema": "config.schema", "format": "config.quoted", "topic": "name"}[k]
		want := v
		if k != "schema" {
			want = strings.ToUpper(v)
		}
		if got, _ := value(t, r, "pipeline.transforms.0."+p); strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("%s: got %q, want %q", k, got, want)
		}
	}
}

// TestJSONValueBecomesMapping: as in Dataflow, a JSON map given as a parameter becomes a YAML
// flow mapping where the template puts it as a whole value.
func TestJSONValueBecomesMapping(t *testing.T) {
	path := write(t, "p.yaml", header+"pipeline:\n  props: {{ props }}\n")
	r, err := render(t, path, params("topic", "t", "props", `{"group.id": "g", "n": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := value(t, r, "pipeline.props.group.id"); got != "" {
		t.Errorf("unexpected nesting")
	}
	if n := mappingValue(r.Doc.Content[0], "pipeline"); n == nil || mappingValue(n, "props").Kind != yaml.MappingNode {
		t.Errorf("props must be a mapping:\n%s", r.Source)
	}
}

func TestSecretsAreMasked(t *testing.T) {
	t.Setenv("SLUICE_TEST_SECRET", "s3cr3t-from-env")
	file := write(t, "pw.txt", "s3cr3t-from-file\n")
	path := write(t, "p.yaml", header+`pipeline:
  a: {{ pw }}
  b: "{{ group }}"
  c: {{ schema | upper }}
`)
	r, err := render(t, path, params("topic", "t", "pw", "hunter2", "group", "${env:SLUICE_TEST_SECRET}", "schema", "${file:"+file+"}"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := value(t, r, "pipeline.b"); got != "s3cr3t-from-env" {
		t.Errorf("${env:} must be resolved for the run, got %q", got)
	}
	if got, _ := value(t, r, "pipeline.a"); got != "hunter2" {
		t.Errorf("password must be rendered for the run, got %q", got)
	}
	shown := r.Display()
	for _, s := range []string{"hunter2", "s3cr3t", "S3CR3T"} {
		if strings.Contains(shown, s) {
			t.Errorf("render shows secret %q:\n%s", s, shown)
		}
	}
	if !strings.Contains(shown, "a: <secret:pw>") || !strings.Contains(shown, `b: "${env:SLUICE_TEST_SECRET}"`) {
		t.Errorf("secrets must show as their mask or reference:\n%s", shown)
	}
	if got := r.Secrets.Mask("error: bad value hunter2 / s3cr3t-from-file"); got != "error: bad value <secret:pw> / ${file:"+file+"}" {
		t.Errorf("Mask: %q", got)
	}

	_, err = render(t, path, params("topic", "t", "pw", "${env:SLUICE_TEST_UNSET_VAR}"))
	if err == nil || !strings.Contains(err.Error(), "environment variable SLUICE_TEST_UNSET_VAR is not set") {
		t.Errorf("an unset variable must be named: %v", err)
	}
}

func TestSecretNotInValidationErrors(t *testing.T) {
	path := write(t, "p.yaml", `template:
  parameters:
    - name: pw
      type: password
      regexes: ["^[a-z]+$"]
pipeline: []
`)
	_, err := render(t, path, params("pw", "Hunter2"))
	if err == nil || strings.Contains(err.Error(), "Hunter2") {
		t.Errorf("want an error without the value, got %v", err)
	}
}

func TestOptionsFile(t *testing.T) {
	path := write(t, "p.yaml", `template:
  options_file: [kafka_options]
  parameters:
    - kafka_read
    - kafak_write
pipeline:
  topic: {{ topic }}
`, "kafka_options.yaml", `options:
  - name: kafka_read
    parameters:
      - name: topic
        required: true
  - name: kafka_write
    parameters:
      - name: out
`)
	_, err := render(t, path, params("topic", "x"))
	want := []string{
		`5:7: unknown option group "kafak_write" (did you mean "kafka_write"?)`,
	}
	if got := problems(t, path, err); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(mustRead(t, path), "kafak", "kafka", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = render(t, path, Input{})
	if err == nil || !strings.Contains(err.Error(), "kafka_options.yaml:4:15: missing required parameter \"topic\"") {
		t.Errorf("a parameter of an options file must be positioned there: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A plain file given no variables keeps a bare {{ }} as data (the generator's faker syntax),
// but is rendered once it has a statement, or variables are given.
func TestPlainFileKeepsBareExpressions(t *testing.T) {
	src := "pipeline:\n  source:\n    config:\n      schema: '{\"id\": \"{{uuid()}}\"}'\n"
	path := write(t, "p.yaml", src)
	r, err := render(t, path, Input{})
	if err != nil || string(r.Source) != src {
		t.Fatalf("a plain file changed: %v\n%s", err, r.Source)
	}
	path = write(t, "q.yaml", "{% set k = 'Create' %}\npipeline:\n  type: {{ k }}\n")
	if r, err = render(t, path, Input{}); err != nil || !strings.Contains(string(r.Source), "type: Create") {
		t.Fatalf("a file with a statement was not rendered: %v\n%s", err, r.Source)
	}
}
