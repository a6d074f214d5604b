package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// withStdin makes src what "-" reads during the test.
func withStdin(t *testing.T, src string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(src)
	t.Cleanup(func() { stdin = old })
}

// "-" is standard input for every command that reads a pipeline; messages name it <stdin>.
func TestStdinPipeline(t *testing.T) {
	dir := t.TempDir()
	good := "pipeline:\n  type: chain\n  transforms:\n    - type: Create\n      config: {elements: [{n: 1}, {n: 2}]}\n" +
		"    - type: WriteToJson\n      config: {path: " + filepath.Join(dir, "out") + "}\n"
	bad := "pipeline:\n  type: chain\n  transforms:\n    - type: Create\n      config: {elements: [{n: 1}]}\n    - type: Filter\n      config: {keep: m > 0}\n"
	cases := []struct {
		args []string
		src  string
		code int
		want string
	}{
		{[]string{"validate", "-"}, good, exitOK, "<stdin>: valid (2 transforms; pipeline stdin)"},
		{[]string{"validate", "-"}, bad, exitInvalid, "<stdin>:7:"},
		{[]string{"graph", "-"}, good, exitOK, "digraph pipeline {"},
		{[]string{"graph", "-"}, bad, exitInvalid, "<stdin>:7:"},
		{[]string{"render", "-"}, good, exitOK, "type: WriteToJson"},
		{[]string{"render", "-"}, "template:\n  parameters:\n    - {name: x, required: true}\npipeline: [{type: Create, config: {elements: [\"{{ x }}\"]}}]\n",
			exitInvalid, `<stdin>:3:14: missing required parameter "x"`},
		{[]string{"fmt", "-"}, good, exitOK, "    - type: Create"},
		{[]string{"test", "-"}, good + "tests:\n  - name: t\n    expected_inputs: [{name: WriteToJson, elements: [{n: 1}, {n: 2}]}]\n", exitOK, "<stdin>: 1 passed, 0 failed"},
		{[]string{"test", "-"}, "pipelines:\n  - pipeline: [{type: Creat}]\n", exitInvalid, "<stdin>:2:"},
		{[]string{"run", "-"}, good, exitOK, "read 2 records"},
		{[]string{"run", "-"}, bad, exitInvalid, "<stdin>:7:"},
	}
	for _, c := range cases {
		withStdin(t, c.src)
		code, out, errOut := sluice(t, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("sluice %s: exit %d, want %d and %q in:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errOut)
		}
	}
	// The run from standard input wrote where its file said, under the name "stdin".
	if files, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(files) == 0 {
		t.Error("sluice run - wrote nothing")
	}
}

var pipelineName = regexp.MustCompile(`; pipeline (\S+)\)`)

// validateName returns the pipeline name sluice validate reports for args.
func validateName(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := sluice(t, append([]string{"validate"}, args...)...)
	m := pipelineName.FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("sluice validate %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return m[1]
}

// Two runs of one template on different topics are different pipelines by default; one run
// with other tuning is the same pipeline; --name and -p jobName choose the name.
func TestTemplateJobName(t *testing.T) {
	k2k := func(in string, more ...string) []string {
		return append([]string{"template:Kafka_To_Kafka", "-p", "readBootstrapServerAndTopic=localhost:9092;" + in,
			"-p", "writeBootstrapServerAndTopic=localhost:9092;out"}, more...)
	}
	a, b := validateName(t, k2k("orders")...), validateName(t, k2k("payments")...)
	if !regexp.MustCompile(`^Kafka_To_Kafka-[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("the default job names of Kafka_To_Kafka on topics orders and payments are %q and %q; want the template's name and a hash of what each reads and writes", a, b)
	}
	if tuned := validateName(t, k2k("orders", "-p", "kafkaReadOffset=earliest")...); tuned != a {
		t.Errorf("another kafkaReadOffset renamed the job from %q to %q: its checkpoints would be lost", a, tuned)
	}
	if group := validateName(t, k2k("orders", "-p", "consumerGroupId=g2")...); group == a {
		t.Errorf("another consumer group kept the job name %q", a)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{k2k("orders", "--name", "orders-copy"), "orders-copy"},
		{k2k("orders", "-p", "jobName=orders-copy2"), "orders-copy2"},
		{[]string{filepath.Join(repoRoot(t), "examples", "quickstart.yaml"), "--name", "qs2"}, "qs2"},
		{[]string{filepath.Join(repoRoot(t), "examples", "quickstart.yaml")}, "quickstart"},
	} {
		if got := validateName(t, c.args...); got != c.want {
			t.Errorf("sluice validate %s: pipeline %q, want %q", strings.Join(c.args, " "), got, c.want)
		}
	}
	// --name goes through the template's jobName: its regex applies, and render shows it.
	if code, _, errOut := sluice(t, append([]string{"validate"}, k2k("orders", "--name", "no spaces")...)...); code != exitInvalid || !strings.Contains(errOut, "jobName") {
		t.Errorf("--name 'no spaces': exit %d: %s", code, errOut)
	}
	if _, out, _ := sluice(t, append([]string{"render"}, k2k("orders", "--name", "orders-copy")...)...); !strings.Contains(out, "name: orders-copy") {
		t.Errorf("render --name does not show the name:\n%s", out)
	}
}

// The flags users of gcloud dataflow yaml run and flex-template run type are taken: the
// pipeline by flag and the job name as the argument, a Google template's location as the
// built-in template of its name, Jinja variables and parameters in gcloud's spelling.
func TestGcloudSpellings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	writeFile(t, file, "pipeline:\n  - type: Create\n    config: {elements: [{n: {{ n | default(1) }}}]}\n  - type: LogForTesting\n    input: Create\n")
	gcs := "gs://dataflow-templates-us-central1/latest/flex/Kafka_to_Kafka"
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", "my-job", "--yaml-pipeline-file=" + file, "--jinja-variables", `{"n": 5}`}, exitOK, "valid (2 transforms; pipeline my-job)"},
		{[]string{"render", "--yaml-pipeline-file", file, "--jinja-variables", `{"n": 5}`}, exitOK, "{n: 5}"},
		{[]string{"validate", "my-job", "--yaml-pipeline", "pipeline: [{type: Create, config: {elements: [1]}}]"}, exitOK, "<yaml-pipeline>: valid (1 transforms; pipeline my-job)"},
		{[]string{"validate", "--yaml-pipeline", "pipeline: [{type: Creat}]"}, exitInvalid, "<yaml-pipeline>:1:19: unknown transform type"},
		{[]string{"validate", "copy-job", "--template-file-gcs-location=" + gcs,
			"--parameters", "readBootstrapServerAndTopic=localhost:9092;in,writeBootstrapServerAndTopic=localhost:9092;out"}, exitOK, "template:Kafka_To_Kafka: valid (2 transforms; pipeline copy-job)"},
		{[]string{"validate", "--template-file-gcs-location=gs://bucket/templates/mine.json"}, exitUsage, "copy the file (gcloud storage cp)"},
		{[]string{"validate", "a", "b", "--yaml-pipeline-file", file}, exitUsage, "give the job name alone"},
		{[]string{"run", "a", "--name", "b", "--yaml-pipeline-file", file}, exitUsage, "the job name is given twice"},
		{[]string{"validate", file, "--yaml-pipeline-file", file, "--yaml-pipeline", "x"}, exitUsage, "given already, by --yaml-pipeline-file"},
	}
	for _, c := range cases {
		code, out, errOut := sluice(t, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("sluice %s: exit %d, want %d and %q in:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errOut)
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// componentTwice matches a start-up error's component, its position, and what follows.
var componentTwice = regexp.MustCompile(`(\w+(?: '[^']*')?) \([^)]*\): (\w+(?: '[^']*')?):`)

// A service that cannot be reached at start is named, with its address, in the error, at once
// with --startup-timeout 0.
func TestMissingServiceNamed(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	addr := closedPort(t)
	cases := []struct {
		name, pipeline, want string
	}{
		{"kafka", "pipeline:\n  - type: ReadFromKafka\n    config: {bootstrap_servers: '" + addr + "', topic: t, format: RAW}\n" +
			"  - {type: WriteToJson, input: ReadFromKafka, config: {path: out}}\n", addr + " (Kafka, bootstrap_servers)"},
		{"iceberg", "pipeline:\n  - {type: Create, config: {elements: [{n: 1}]}}\n" +
			"  - type: WriteToIceberg\n    input: Create\n    config: {table: db.t, catalog_name: c, catalog_properties: {type: rest, uri: 'http://" + addr + "'}}\n",
			"open Iceberg catalog c (REST catalog at http://" + addr + ")"},
		{"bigquery", "pipeline:\n  - {type: Create, config: {elements: [{n: 1}]}}\n" +
			"  - type: WriteToBigQuery\n    input: Create\n    config: {table: 'dev-project.d.t', endpoint: 'http://" + addr + "', storage_endpoint: '" + addr + "'}\n",
			"read table dev-project.d.t from the BigQuery API at http://" + addr},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name+".yaml")
		if err := os.WriteFile(path, []byte(c.pipeline), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		code, _, errOut := sluice(t, "run", path, "--startup-timeout", "0")
		if code != exitRuntime || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, want %d and %q in:\n%s", c.name, code, exitRuntime, c.want, errOut)
		}
		// The runner names the component with its position, and the message says it once.
		if m := componentTwice.FindStringSubmatch(errOut); m != nil && m[1] == m[2] {
			t.Errorf("%s: the error names the component twice:\n%s", c.name, errOut)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %v to say the service is missing", c.name, d)
		}
	}
}
