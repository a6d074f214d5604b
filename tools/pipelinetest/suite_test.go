package pipelinetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runner"
)

// suiteFile has two pipelines: the first writes into the fixture, the second reads it back;
// the second's entry starts on the line after its dash.
const suiteFile = `fixtures:
  - name: DIR
    type: tempfile.TemporaryDirectory
pipelines:
  - pipeline:
      type: chain
      transforms:
        - type: Create
          config: {elements: [{line: x}, {line: y}]}
        - type: WriteToText
          config: {path: "{DIR}/out"}
    options: {project: p}
  -
    pipeline:
      type: chain
      transforms:
        - type: ReadFromText
          config: {path: "{DIR}/out/*/*"}
        - type: AssertEqual
          config: {elements: [{line: y}, {line: x}]}
`

func TestIsSuite(t *testing.T) {
	for src, want := range map[string]bool{
		suiteFile:                       true,
		"pipeline: {}\n":                false,
		"pipeline: {}\npipelines: []\n": false,
		"pipelines: [\n":                false,
	} {
		if got := IsSuite([]byte(src)); got != want {
			t.Errorf("IsSuite(%q) = %v", src, got)
		}
	}
}

func TestSuiteRuns(t *testing.T) {
	s, err := ReadSuite("s.yaml", []byte(suiteFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pipelines) != 2 || s.Pipelines[0].Pos.Line != 5 || s.Pipelines[1].Pos.Line != 14 {
		t.Fatalf("pipelines at %v", s.Pipelines)
	}
	if _, err := s.Validate(runner.LoadOptions{Offline: true}); err != nil {
		t.Fatalf("validate: %v", err)
	}
	results, err := s.Run(context.Background(), runner.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Errorf("pipeline %d: %v", i+1, r.Err)
		}
	}
	if len(results) != 2 {
		t.Errorf("%d pipelines ran, want 2", len(results))
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "sluice-DIR-*"))
	if len(left) > 0 {
		t.Errorf("fixture directories left behind: %v", left)
	}
}

// TestSuiteProblems: every pipeline's problems at once, at the suite's positions, and
// fixtures sluice cannot provide named where they are.
func TestSuiteProblems(t *testing.T) {
	src := `fixtures:
  - name: TABLE
    type: "apache_beam.yaml.integration_tests.temp_bigquery_table"
    config: {project: p}
pipelines:
  - pipeline:
      type: chain
      transforms:
        - type: Create
          config: {elements: [1]}
        - type: Fitler
  - pipeline:
      type: chain
      transforms:
        - type: Create
          config: {elements: [{a: 1}]}
        - type: AssertEqual
          config: {elements: [{b: 1}]}
`
	_, err := ReadSuite("s.yaml", []byte(src))
	want := `s.yaml:3:11: fixture TABLE: sluice cannot provide the type "apache_beam.yaml.integration_tests.temp_bigquery_table"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
	s, _ := ReadSuite("s.yaml", []byte(strings.Replace(src, "apache_beam.yaml.integration_tests.temp_bigquery_table", "tempfile.TemporaryDirectory", 1)))
	_, err = s.Validate(runner.LoadOptions{Offline: true})
	for _, want := range []string{`s.yaml:11:17: unknown transform type "Fitler"`, `s.yaml:18:31: element 1: field "b" is not in the input's rows`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"DIR": "/tmp/d"}
	for in, want := range map[string]string{
		`path: "{DIR}/x"`:                       `path: "/tmp/d/x"`,
		`schema: '{{"a":[{{"b":1}}]}}' # {DIR}`: `schema: '{"a":[{"b":1}]}' # /tmp/d`,
		`elements: [{a: 1}, {DIR}]`:             `elements: [{a: 1}, {DIR}]`, // a flow mapping: not a string
		`path: "{OTHER}/x"`:                     `path: "{OTHER}/x"`,
		`f: "{DIR"`:                             `f: "{DIR"`,
	} {
		if got := string(substitute([]byte(in), vars)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
