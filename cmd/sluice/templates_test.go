package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/templates"
)

// TestBuiltinTemplatesPassTheirTests runs `sluice test` on every built-in template: each ships
// with tests, and they pass.
func TestBuiltinTemplatesPassTheirTests(t *testing.T) {
	builtins := templates.Builtins()
	if len(builtins) < 3 {
		t.Fatalf("%d built-in templates, want Kafka_To_Iceberg, Kafka_To_Kafka and Streaming_Data_Generator at least", len(builtins))
	}
	for _, b := range builtins {
		code, out, errOut := sluice(t, "test", b.Path)
		if code != exitOK || !strings.Contains(out, b.Path+": ") || !strings.Contains(out, " passed, 0 failed") {
			t.Errorf("sluice test %s: exit %d\n%s%s", b.Path, code, out, errOut)
		}
	}
}

// TestExamplesPassTheirTests runs `sluice test` on every example pipeline and template.
func TestExamplesPassTheirTests(t *testing.T) {
	root := repoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	files = append(files, filepath.Join(root, "examples", "templates", "kafka_to_kafka.yaml"))
	for _, f := range files {
		code, out, errOut := sluice(t, "test", f)
		if code != exitOK || !strings.Contains(out, " passed, 0 failed") {
			t.Errorf("sluice test %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
}

// TestBrokenExpectationFailsWithDiff: a wrong expected element fails the test, exit 1, with
// the rows that differ on each side.
func TestBrokenExpectationFailsWithDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, path, `pipeline:
  type: chain
  transforms:
    - type: ReadFromJson
      name: orders
      config:
        path: orders.jsonl
        schema: {type: object, properties: {id: {type: integer}, qty: {type: integer}}}
    - type: MapToFields
      name: doubled
      config:
        append: true
        fields:
          twice: qty * 2
    - type: WriteToJson
      name: out
      config:
        path: out
tests:
  - name: doubles the quantity
    mock_outputs:
      - name: orders
        elements: [{id: 1, qty: 2}, {id: 2, qty: 5}]
    expected_inputs:
      - name: out
        elements: [{id: 1, qty: 2, twice: 4}, {id: 2, qty: 5, twice: 11}]
`)
	code, out, errOut := sluice(t, "test", path)
	want := fmt.Sprintf(`FAIL doubles the quantity (%[1]s:20:5)
    %[1]s:25:15: out receives 2 rows, expected 2
      - expected, not there:
        {"id":2,"qty":5,"twice":11}
      + there, not expected:
        {"id":2,"qty":5,"twice":10}
%[1]s: 0 passed, 1 failed
`, path)
	if code != exitInvalid || out != want {
		t.Fatalf("exit %d, want %d; output:\n%s%s\nwant:\n%s", code, exitInvalid, out, errOut, want)
	}
}

func TestTestProblemsArePositioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, path, `pipeline:
  type: chain
  transforms:
    - type: ReadFromJson
      name: orders
      config:
        path: orders.jsonl
        schema: {type: object, properties: {id: {type: integer}}}
    - type: WriteToJson
      name: out
      config:
        path: out
tests:
  - name: typos
    mock_outputs:
      - name: order
        elements: [{id: 1}]
    expected_inputs:
      - name: out
        elements: [{idd: 1}]
  - name: nothing expected
    mock_output: []
`)
	code, _, errOut := sluice(t, "test", path)
	for _, want := range []string{
		path + `:22:5: unknown key "mock_output" in a test (did you mean "mock_outputs"?)`,
		path + `:21:5: test "nothing expected" expects nothing: give expected_inputs or expected_outputs`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("missing %q in:\n%s", want, errOut)
		}
	}
	if code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
	}
	writeFile(t, path, strings.Split(mustRead(t, path), "  - name: nothing expected")[0])
	code, out, _ := sluice(t, "test", path)
	for _, want := range []string{
		path + `:16:15: no transform "order" in the pipeline (did you mean "orders"?)`,
		path + `:20:20: element 1 of out: field "idd" is not in the rows {id integer?} (did you mean "id"?)`,
		path + `:14:5: test "typos" needs the source ReadFromJson 'orders', which it does not mock`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
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

func TestTemplatesListAndDescribe(t *testing.T) {
	code, out, _ := sluice(t, "templates", "list")
	for _, b := range templates.Builtins() {
		if !strings.Contains(out, b.Name+"  ") {
			t.Errorf("templates list does not list %s:\n%s", b.Name, out)
		}
	}
	if code != exitOK {
		t.Errorf("templates list: exit %d", code)
	}
	code, out, _ = sluice(t, "templates", "describe", "Kafka_To_Iceberg")
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 {
			rows[f[0]] = strings.Join(f[1:4], " ")
		}
	}
	for name, want := range map[string]string{"PARAMETER": "TYPE REQUIRED DEFAULT", "bootstrapServers": "text yes Kafka",
		"triggeringFrequencySeconds": "integer yes How", "format": "enum(RAW|STRING|JSON|AVRO|PROTO) no JSON",
		"fileDescriptorPath": "text no PROTO:"} {
		if rows[name] != want {
			t.Errorf("describe shows %s as %q, want %q:\n%s", name, rows[name], want, out)
		}
	}
	if code != exitOK {
		t.Errorf("templates describe: exit %d", code)
	}
	code, _, errOut := sluice(t, "templates", "describe", "Kafka_To_Icebrg")
	if code != exitInvalid || !strings.Contains(errOut, `no built-in template "Kafka_To_Icebrg" (did you mean "Kafka_To_Iceberg"?)`) {
		t.Errorf("describe of a typo: exit %d: %s", code, errOut)
	}
}

// TestBuiltinRejectsGoogleOnlyParameters: Secret Manager ids and Cloud Storage paths are
// errors that say what to give instead, never ignored.
func TestBuiltinRejectsGoogleOnlyParameters(t *testing.T) {
	base := []string{"validate", "template:Kafka_To_Kafka", "-p", "readBootstrapServerAndTopic=localhost:9092;in", "-p", "writeBootstrapServerAndTopic=localhost:9092;out"}
	code, _, errOut := sluice(t, append(base, "-p", "kafkaReadPasswordSecretId=projects/p/secrets/s/versions/1")...)
	if code != exitInvalid || !strings.Contains(errOut, `parameter "kafkaReadPasswordSecretId" is not supported by sluice: Secret Manager is not available; give kafkaReadPassword=${env:NAME}`) {
		t.Errorf("a Secret Manager id: exit %d: %s", code, errOut)
	}
	code, _, errOut = sluice(t, append(base, "-p", "kafkaWriteAuthenticationMethod=SSL", "-p", "kafkaWriteTruststoreLocation=gs://bucket/ca.pem")...)
	if code != exitInvalid || !strings.Contains(errOut, "gs:// paths are not supported here: copy the file and give its local path") {
		t.Errorf("a gs:// trust store: exit %d: %s", code, errOut)
	}
	code, out, errOut := sluice(t, append(base, "-p", "kafkaReadAuthenticationMode=SASL_PLAIN", "-p", "kafkaReadUsername=u", "-p", "kafkaReadPassword=hunter2")...)
	if code != exitOK || strings.Contains(out+errOut, "hunter2") {
		t.Errorf("SASL_PLAIN: exit %d:\n%s%s", code, out, errOut)
	}
}
