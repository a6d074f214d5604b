package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplateExamplesValidate: every template in examples/templates validates with the
// parameters of its sidecar NAME.params.yaml.
func TestTemplateExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "templates", "*.yaml"))
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".params.yaml") {
			continue
		}
		n++
		code, out, errOut := sluice(t, "validate", f, "--params-file", strings.TrimSuffix(f, ".yaml")+".params.yaml")
		if code != exitOK || !strings.Contains(out, "valid") {
			t.Errorf("sluice validate %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
	if n == 0 {
		t.Fatal("no templates in examples/templates")
	}
}

func TestTemplateParameterFlags(t *testing.T) {
	tpl := filepath.Join(repoRoot(t), "examples", "templates", "kafka_to_kafka.yaml")
	cases := []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"-p", []string{"render", tpl, "-p", "bootstrapServers=embedded", "-p", "inputTopic=in", "-p", "outputTopic=out", "-p", "messageFormat=RAW"},
			exitOK, []string{"topic: in\n", "format: RAW\n", "auto_offset_reset_config: earliest\n"}, []string{"max_num_records", "Filter", "schema:"}},
		{"gcloud custom delimiter", []string{"render", tpl, "--parameters", `^@^bootstrapServers=a:9092,b:9092@inputTopic=in@outputTopic=out@messageFormat=RAW@consumerConfigUpdates={"group.id": "g", "x": "1"}`},
			exitOK, []string{"bootstrap_servers: a:9092,b:9092\n", `consumer_config_updates: {"group.id": "g", "x": "1"}`}, nil},
		{"gcloud commas", []string{"render", tpl, "--parameters", "bootstrapServers=embedded,inputTopic=in,outputTopic=out,filter=score > 1"},
			exitOK, []string{"keep: \"score \\u003e 1\""}, nil},
		{"validate", []string{"validate", tpl, "-p", "bootstrapServers=embedded", "-p", "inputTopic=in", "-p", "outputTopic=out", "-p", "messageFormat=RAW"},
			exitOK, []string{"valid (2 transforms;"}, nil},
		{"all problems at once", []string{"validate", tpl, "-p", "bootstrapServer=x", "-p", "inputTopic=a b", "-p", "messageFormat=AVRO", "-p", "maxNumRecords=ten"},
			exitInvalid, []string{
				tpl + `:14:3: unknown parameter "bootstrapServer" (did you mean "bootstrapServers"?)`,
				tpl + `:15:13: missing required parameter "bootstrapServers"`,
				tpl + `:21:13: parameter "inputTopic" must match ^[A-Za-z0-9._-]+$, not "a b"`,
				tpl + `:25:13: missing required parameter "outputTopic"`,
				tpl + `:29:13: parameter "messageFormat" must be one of RAW, JSON, not "AVRO"`,
				tpl + `:40:13: parameter "maxNumRecords" must be an integer, not "ten"`,
				"6 problems"}, nil},
		{"a value with a newline is one string", []string{"render", tpl, "-p", "bootstrapServers=embedded\n    - type: Evil", "-p", "inputTopic=in", "-p", "outputTopic=out"},
			exitOK, []string{"bootstrap_servers: |-\n"}, []string{"\n    - type: Evil\n"}},
		{"bad --parameters", []string{"render", tpl, "--parameters", "a=1,b"}, exitUsage, []string{"want NAME=VALUE"}, nil},
		{"bad --jinja_variables", []string{"render", tpl, "--jinja_variables", "{a: 1}"}, exitUsage, []string{"--jinja_variables: invalid JSON"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := sluice(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			rendered := out + errOut
			if i := strings.Index(rendered, "\ntests:"); i >= 0 {
				rendered = rendered[:i] // the template's own tests may mention anything
			}
			for _, w := range c.not {
				if strings.Contains(rendered, w) {
					t.Errorf("output has %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

func TestJinjaVariablesAndParamsFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `pipeline:
  type: chain
  transforms:
{% for e in elements %}
    - type: Create
      name: c{{ loop.index }}
      config: {elements: [{n: {{ e }}}]}
{% endfor %}
    - type: Flatten
      name: {{ name }}
`)
	pf := filepath.Join(dir, "params.json")
	writeFile(t, pf, `{"name": "merged"}`)
	code, out, errOut := sluice(t, "render", p, "--jinja_variables", `{"elements": [1, 2]}`, "--params-file", pf)
	if code != exitOK || !strings.Contains(out, "name: c2\n") || !strings.Contains(out, "{n: 2}") || !strings.Contains(out, "name: merged\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = sluice(t, "validate", p, "--params-file", pf)
	if code != exitInvalid || !strings.Contains(errOut, p+`:4:13: undefined variable "elements"`) {
		t.Errorf("an undefined variable must be an error with its position: exit %d\n%s", code, errOut)
	}
}
