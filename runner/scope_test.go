package runner_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
)

// nested has a composite with a stateful transform inside, two unnamed chains (named Chain and
// Chain#2, as they cannot be referred to by name: they hold their sinks), and a list input of
// a one-input transform.
const nested = `
pipeline:
  transforms:
    - type: Create
      name: Numbers
      config: {elements: [{k: a, n: 1}, {k: b, n: 2}]}
    - type: composite
      name: Totals
      input: {rows: Numbers}
      windowing: {type: fixed, size: 10s}
      transforms:
        - type: Combine
          name: Sum
          input: rows
          config: {group_by: k, combine: {n: sum}}
      output: Sum
    - type: chain
      input: Totals
      transforms:
        - type: Filter
          config: {keep: n > 1}
      sink: {type: LogForTesting}
    - type: chain
      input: Numbers
      transforms:
        - type: Filter
          config: {keep: n > 0}
      sink: {type: LogForTesting}
    - type: LogForTesting
      input: [Totals, Numbers]
`

func parseNested(t *testing.T, src string) *runner.Plan {
	t.Helper()
	p, err := runner.Parse("nested.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The plan holds the transforms that run, named <composite>/<name>, with edges straight to
// what they read; composites and chains are not nodes.
func TestNestedNamesAndEdges(t *testing.T) {
	p := parseNested(t, nested)
	inputs := map[string][]string{}
	var names []string
	for _, n := range p.Nodes {
		names = append(names, n.Name)
		for _, e := range n.Inputs {
			inputs[n.Name] = append(inputs[n.Name], e.From.Name)
		}
	}
	slices.Sort(names)
	want := []string{"Chain#2/Filter", "Chain#2/LogForTesting", "Chain/Filter", "Chain/LogForTesting", "LogForTesting",
		"LogForTesting-Flatten[input]", "Numbers", "Totals/Sum"}
	if !slices.Equal(names, want) {
		t.Fatalf("nodes %v, want %v", names, want)
	}
	for name, from := range map[string][]string{
		"Totals/Sum":                   {"Numbers"},
		"Chain/Filter":                 {"Totals/Sum"},
		"Chain#2/Filter":               {"Numbers"},
		"Chain/LogForTesting":          {"Chain/Filter"},
		"LogForTesting-Flatten[input]": {"Totals/Sum", "Numbers"},
		"LogForTesting":                {"LogForTesting-Flatten[input]"},
	} {
		if !slices.Equal(inputs[name], from) {
			t.Errorf("%s reads %v, want %v", name, inputs[name], from)
		}
	}
	if dot := p.DOT(); !strings.Contains(dot, "subgraph cluster_0 {\n    label=\"Totals\";\n    n1 [label=\"Totals/Sum\\nCombine\"];\n  }") {
		t.Errorf("sluice graph does not draw the composite around its transform:\n%s", dot)
	}
}

// A stateful transform inside a composite keeps its state under its scoped name, with the
// composite's windowing in its identity, so that sluice diff and the checkpoints tell it
// apart from one of the same name elsewhere.
func TestNestedStateIdentity(t *testing.T) {
	sh := runner.ShapeOf(parseNested(t, nested))
	id, ok := sh.Stateful["Totals/Sum"]
	if !ok || len(sh.Stateful) != 1 {
		t.Fatalf("stateful transforms %v, want Totals/Sum only", sh.Stateful)
	}
	if !strings.Contains(strings.Join(id, " "), `"Type":"fixed"`) {
		t.Errorf("state identity %v lacks the composite's windowing", id)
	}
	moved := strings.Replace(nested, "size: 10s", "size: 20s", 1)
	if slices.Equal(runner.ShapeOf(parseNested(t, moved)).Stateful["Totals/Sum"], id) {
		t.Error("a new windowing on the composite left the state identity unchanged")
	}
}

// Problems inside composites come with the rest of the file's, at their own positions.
func TestNestedProblemsAtOnce(t *testing.T) {
	src := `pipeline:
  transforms:
    - type: Create
      config: {elements: [{n: 1}]}
    - type: composite
      name: A
      input: B
      transforms:
        - type: Filter
          input: input
          config: {keep: n > 0}
      output: Filter
    - type: composite
      name: B
      input: A
      transforms:
        - type: Filter
          input: input
          config: {keep: m > 0}
      output: Filter
    - type: chain
      name: Empty
      input: Create
`
	_, err := runner.Parse("cycle.yaml", []byte(src))
	var list diag.List
	if !errors.As(err, &list) {
		t.Fatalf("want positioned problems, got %v", err)
	}
	var got []string
	for _, d := range list {
		got = append(got, strings.TrimPrefix(d.Error(), "cycle.yaml:"))
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{"form a cycle", "21:7: chain 'Empty' has no transforms"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
}

// A stateful transform in an unnamed chain is warned about: its state's name would move to
// another unnamed chain written above it.
func TestNestedUnnamedStateWarning(t *testing.T) {
	if p := parseNested(t, nested); len(p.Warnings) != 0 {
		t.Errorf("warnings for a named composite: %v", p.Warnings)
	}
	unnamed := strings.Replace(nested, "      name: Totals\n", "", 1)
	unnamed = strings.Replace(unnamed, "input: Totals", "input: Composite", -1)
	unnamed = strings.Replace(unnamed, "input: [Totals, Numbers]", "input: [Composite, Numbers]", 1)
	p := parseNested(t, unnamed)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Error(), `11:11: Combine 'Composite/Sum' keeps state under "Composite/Sum", a name that depends on the unnamed composite around it`) {
		t.Errorf("warnings %v", p.Warnings)
	}
}
