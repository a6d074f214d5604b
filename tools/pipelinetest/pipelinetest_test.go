package pipelinetest

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runner"
)

// runTests loads src, runs its tests: and returns each test's failures joined, or the
// setup error.
func runTests(t *testing.T, src string) []string {
	t.Helper()
	p, err := runner.Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	tests, err := Read("p.yaml", []byte(src))
	if err != nil {
		t.Fatalf("read tests: %v", err)
	}
	var out []string
	for _, pt := range tests {
		res, err := Run(context.Background(), p, pt)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		out = append(out, strings.Join(res.Failures, "\n"))
	}
	return out
}

const calcPipeline = `pipeline:
  transforms:
    - type: Create
      name: nums
      config:
        elements: [{a: 6, b: 3}, {a: 1, b: 0}]
    - type: MapToFields
      name: calc
      input: nums
      config:
        fields:
          q: a / b
        error_handling:
          output: bad
    - type: WriteToJson
      name: good_out
      input: calc
      config: {path: out/good}
    - type: WriteToJson
      name: bad_out
      input: calc.bad
      config: {path: out/bad}
`

func TestPipelineTests(t *testing.T) {
	cases := []struct {
		name, tests string
		want        string // "" = pass; else a substring of the failure or error
	}{
		{"Create runs for real; error rows compare on the fields given", `
  - expected_outputs:
      - name: calc
        elements: [{q: 2}]
      - name: calc.bad
        elements: [{element: {a: 1, b: 0}}]`, ""},
		{"mock_inputs feed a transform", `
  - mock_inputs:
      - name: calc
        elements: [{a: 8, b: 2}]
    expected_inputs:
      - name: good_out
        elements: [{q: 4}]`, ""},
		{"a wrong error row fails", `
  - expected_inputs:
      - name: bad_out
        elements: [{element: {a: 2, b: 0}}]`, "- expected, not there:\n    {\"element\":{\"a\":2,\"b\":0}}\n  + there, not expected:\n    {\"element\":{\"a\":1,\"b\":0},\"msg\":"},
		{"mocking one output of a transform whose other output is used", `
  - mock_outputs:
      - name: calc
        elements: [{q: 1}]
    expected_inputs:
      - name: bad_out
        elements: []`, `mocks MapToFields 'calc' but not its output calc.bad, which is used`},
		{"a sink's output", `
  - expected_outputs:
      - name: good_out
        elements: []`, `p.yaml:25:15: WriteToJson 'good_out' has no outputs`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runTests(t, calcPipeline+"tests:"+c.tests+"\n")
			if len(got) != 1 {
				t.Fatalf("%d results", len(got))
			}
			if c.want == "" && got[0] != "" || c.want != "" && !strings.Contains(got[0], c.want) {
				t.Errorf("got:\n%s\nwant: %q", got[0], c.want)
			}
		})
	}
}
