package pipelinetest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/templates"
	"gopkg.in/yaml.v3"
)

// Test is one whole-pipeline test of a file's `tests:` list, as Beam YAML writes them
// (docs/testing.md): the outputs of some transforms are replaced by given elements, and what
// other transforms receive or produce is compared with expected elements.
type Test struct {
	Name string
	Pos  diag.Pos
	// MockOutputs replace the outputs of transforms (NAME or NAME.tag); those transforms and
	// everything only they need do not run.
	MockOutputs []Elements
	// MockInputs replace the inputs of transforms, which then run on them.
	MockInputs []Elements
	// ExpectedInputs are the elements transforms must receive, in any order.
	ExpectedInputs []Elements
	// ExpectedOutputs are the elements outputs (NAME or NAME.tag) must carry, in any order.
	ExpectedOutputs []Elements
	// AllowedSources are sources that may run for real (Create always may).
	AllowedSources []string
	// Params are the template parameters the test renders the file with (sluice adds).
	Params []templates.Param
}

// Elements names a transform (or one of its outputs) and lists elements.
type Elements struct {
	Name     string
	Pos      diag.Pos
	Elements []*yaml.Node
}

// yamlLine is the position yaml.v3 gives in its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var testKeys = []string{"name", "mock_outputs", "mock_inputs", "expected_inputs", "expected_outputs", "allowed_sources", "parameters"}

// Read reads the `tests:` list of the file at path (content src). Like a template header,
// the list is read before the file is rendered, so it must not depend on Jinja; its positions
// are the file's. A file without tests gives none. The error is a diag.List.
func Read(path string, src []byte) ([]*Test, error) {
	text, start := templates.TopLevelBlock(src, "tests")
	if start < 0 {
		return nil, nil
	}
	var diags diag.List
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		msg, line := strings.TrimPrefix(err.Error(), "yaml: "), start+1
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			fmt.Sscan(m[1], &line)
			msg = m[2]
		}
		diags.Add(diag.Pos{File: path, Line: line, Col: 1}, "invalid YAML in tests: %s", msg)
		return nil, diags.Err()
	}
	list := doc.Content[0].Content[1]
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		diags.Add(diag.At(path, list), "tests must be a list of tests, each with a name, mock_outputs and expected_inputs or expected_outputs")
		return nil, diags.Err()
	}
	var out []*Test
	for i, n := range list.Content {
		if t := readTest(path, n, i, &diags); t != nil {
			out = append(out, t)
		}
	}
	return out, diags.Err()
}

func readTest(path string, n *yaml.Node, i int, diags *diag.List) *Test {
	at := func(n *yaml.Node) diag.Pos { return diag.At(path, n) }
	if n.Kind != yaml.MappingNode {
		diags.Add(at(n), "a test must be a mapping with a name, mock_outputs and expected_inputs or expected_outputs")
		return nil
	}
	t := &Test{Name: fmt.Sprintf("test %d", i+1), Pos: at(n)}
	before := len(*diags)
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "name":
			t.Name = v.Value
		case "mock_outputs":
			t.MockOutputs = readElements(path, k.Value, v, diags)
		case "mock_inputs":
			t.MockInputs = readElements(path, k.Value, v, diags)
		case "expected_inputs":
			t.ExpectedInputs = readElements(path, k.Value, v, diags)
		case "expected_outputs":
			t.ExpectedOutputs = readElements(path, k.Value, v, diags)
		case "allowed_sources":
			if v.Decode(&t.AllowedSources) != nil {
				diags.Add(at(v), "allowed_sources must be a list of transform names or types")
			}
		case "parameters":
			t.Params = readTestParams(path, v, diags)
		default:
			diags.Add(at(k), "unknown key %q in a test%s", k.Value, diag.DidYouMean(k.Value, testKeys)).
				Detail = "a test has: " + strings.Join(testKeys, ", ")
		}
	}
	if len(t.ExpectedInputs) == 0 && len(t.ExpectedOutputs) == 0 {
		diags.Add(t.Pos, "test %q expects nothing: give expected_inputs or expected_outputs", t.Name)
	}
	if len(*diags) > before {
		return nil
	}
	return t
}

// readElements reads a list of {name, elements}.
func readElements(path, key string, n *yaml.Node, diags *diag.List) []Elements {
	if n.Kind != yaml.SequenceNode {
		diags.Add(diag.At(path, n), "%s must be a list of {name, elements}", key)
		return nil
	}
	var out []Elements
	for _, item := range n.Content {
		name, elements := component.MappingValue(item, "name"), component.MappingValue(item, "elements")
		if item.Kind != yaml.MappingNode || name == nil || elements == nil {
			diags.Add(diag.At(path, item), "an entry of %s needs a name (of a transform) and elements (a list)", key)
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if k := item.Content[j].Value; k != "name" && k != "elements" {
				diags.Add(diag.At(path, item.Content[j]), "unknown key %q in %s: an entry has a name and elements", k, key)
			}
		}
		if elements.Kind != yaml.SequenceNode && !(elements.Kind == yaml.ScalarNode && elements.Tag == "!!null") {
			diags.Add(diag.At(path, elements), "elements must be a list")
			continue
		}
		out = append(out, Elements{Name: name.Value, Pos: diag.At(path, name), Elements: elements.Content})
	}
	return out
}

// readTestParams reads a test's template parameters: NAME: VALUE, where a mapping or list
// value is given as its JSON text (as --params-file takes them).
func readTestParams(path string, n *yaml.Node, diags *diag.List) []templates.Param {
	ps, err := templates.ParamsFromNode(path, n, "the test's parameters")
	if err != nil {
		diags.Add(diag.At(path, n), "test parameters: %v", err)
	}
	return ps
}
