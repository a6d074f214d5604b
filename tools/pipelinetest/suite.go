package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
	"gopkg.in/yaml.v3"
)

// This file reads and runs Beam's integration-test files (Beam's
// sdks/python/apache_beam/yaml/tests/*.yaml; docs/testing.md): a top-level `pipelines:` list
// whose entries each hold a `pipeline:` and its `options:`, run one after the other, and
// `fixtures:` whose values (a temporary directory) replace {NAME} in the pipelines' text.
// Their assertions are AssertEqual transforms, which fail the run with a diff.

// Suite is a file in Beam's test format.
type Suite struct {
	Path      string
	Fixtures  []Fixture
	Pipelines []SuitePipeline
}

// Fixture is one entry of `fixtures:`.
type Fixture struct {
	Name, Type string
	Pos        diag.Pos // of its type
}

// SuitePipeline is one entry of `pipelines:`.
type SuitePipeline struct {
	Pos diag.Pos
	// Source is a pipeline file of its own: the entry's lines where they are in the suite,
	// every other line blank, so that positions in errors are the suite's.
	Source []byte
}

// tempDirFixtures are the fixture types that provide a new empty directory. Beam's
// gcs_temp_dir gives a directory in a Cloud Storage bucket; sluice has no Cloud Storage
// connector, and a local directory serves the same tests.
var tempDirFixtures = []string{"tempfile.TemporaryDirectory", "apache_beam.yaml.integration_tests.gcs_temp_dir"}

// IsSuite reports whether src is a file in Beam's test format: a mapping with a `pipelines:`
// key and no `pipeline:` key.
func IsSuite(src []byte) bool {
	var top map[string]yaml.Node
	if yaml.Unmarshal(src, &top) != nil {
		return false
	}
	_, many := top["pipelines"]
	_, one := top["pipeline"]
	return many && !one
}

// ReadSuite reads a file in Beam's test format (IsSuite). Fixture types sluice cannot
// provide are errors here, so that validate reports them. The error is a diag.List.
func ReadSuite(path string, src []byte) (*Suite, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Suite{Path: path}
	var diags diag.List
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		diags.Add(diag.Pos{File: path, Line: 1, Col: 1}, "a test file must be a mapping with a pipelines: list")
		return nil, diags.Err()
	}
	root := doc.Content[0]
	var list *yaml.Node
	end := strings.Count(string(src), "\n") + 1 // the last line of the pipelines: list
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "pipelines":
			list = v
			if i+2 < len(root.Content) {
				end = root.Content[i+2].Line - 1
			}
		case "fixtures":
			s.readFixtures(v, &diags)
		}
	}
	if list == nil {
		diags.Add(diag.At(path, root), "the file has no pipelines: list")
		return nil, diags.Err()
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		diags.Add(diag.At(path, list), "pipelines: must be a list of entries with a pipeline: key each")
		return nil, diags.Err()
	}
	lines := strings.Split(string(src), "\n")
	for i, e := range list.Content {
		last := end
		if i+1 < len(list.Content) {
			last = list.Content[i+1].Line - 1
		}
		if e.Kind != yaml.MappingNode {
			diags.Add(diag.At(path, e), "an entry of pipelines: must be a mapping with a pipeline: key (and options:)")
			continue
		}
		s.Pipelines = append(s.Pipelines, SuitePipeline{Pos: diag.At(path, e), Source: entrySource(lines, e, last)})
	}
	return s, diags.Err()
}

// entrySource keeps lines e.Line..last of the suite (1-based) and blanks the rest, and the
// list's dash before the entry: the entry becomes the root mapping of a document, indented
// as it was (YAML allows an indented root).
func entrySource(lines []string, e *yaml.Node, last int) []byte {
	out := make([]string, min(last, len(lines)))
	for l := e.Line; l <= len(out); l++ {
		out[l-1] = lines[l-1]
	}
	first := []rune(out[e.Line-1])
	for c := 0; c < e.Column-1 && c < len(first); c++ {
		first[c] = ' '
	}
	out[e.Line-1] = string(first)
	// A dash alone on the line before the next entry belongs to that entry.
	if n := len(out); n > e.Line && strings.TrimSpace(out[n-1]) == "-" {
		out[n-1] = ""
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

func (s *Suite) readFixtures(n *yaml.Node, diags *diag.List) {
	if n.Kind != yaml.SequenceNode {
		diags.Add(diag.At(s.Path, n), "fixtures: must be a list of {name, type, config}")
		return
	}
	for _, f := range n.Content {
		var fx struct {
			Name string    `yaml:"name"`
			Type yaml.Node `yaml:"type"`
		}
		if err := f.Decode(&fx); err != nil || fx.Name == "" || fx.Type.Value == "" {
			diags.Add(diag.At(s.Path, f), "a fixture needs a name and a type")
			continue
		}
		pos := diag.At(s.Path, &fx.Type)
		if !slices.Contains(tempDirFixtures, fx.Type.Value) {
			diags.Add(pos, "fixture %s: sluice cannot provide the type %q", fx.Name, fx.Type.Value).
				Detail = "sluice provides " + strings.Join(tempDirFixtures, " and ") + " (a new temporary directory)"
			continue
		}
		s.Fixtures = append(s.Fixtures, Fixture{Name: fx.Name, Type: fx.Type.Value, Pos: pos})
	}
}

// substitute replaces {NAME} by the fixture NAME's value, {{ by { and }} by }, as Beam's
// test runner formats each string with Python's str.format, line by line: a line with any
// other brace (a flow mapping, an expression, a name that is no fixture) stays as it is,
// since Beam formats strings only, never mappings. Lines keep their places, so positions
// move only within a line that changed.
func substitute(src []byte, vars map[string]string) []byte {
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		if f, ok := format(l, vars); ok {
			lines[i] = f
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// format formats one line as str.format would, and reports false when a brace of it is not
// part of a replacement field for a fixture or an escaped brace.
func format(line string, vars map[string]string) (string, bool) {
	if !strings.ContainsAny(line, "{}") {
		return line, false
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(line) && line[i+1] == c:
			b.WriteByte(c)
			i++
		case c == '{':
			end := strings.IndexByte(line[i:], '}')
			if end < 0 {
				return "", false
			}
			v, ok := vars[line[i+1:i+end]]
			if !ok {
				return "", false
			}
			b.WriteString(v)
			i += end
		case c == '}':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// Validate loads every pipeline of the suite with o (offline, as sluice validate loads) and
// returns every problem of them, a diag.List, and the plans of those that loaded. The fixtures
// are not created: their values are placeholders.
func (s *Suite) Validate(o runner.LoadOptions) ([]*runner.Plan, error) {
	vars := map[string]string{}
	for _, f := range s.Fixtures {
		vars[f.Name] = filepath.Join(os.TempDir(), "sluice-fixture-"+f.Name)
	}
	var plans []*runner.Plan
	var all diag.List
	for _, p := range s.Pipelines {
		o.Source = substitute(p.Source, vars)
		plan, err := runner.LoadWith(s.Path, o)
		if err != nil {
			var list diag.List
			if !errors.As(err, &list) {
				return plans, err
			}
			all = append(all, list...)
			continue
		}
		plans = append(plans, plan)
	}
	return plans, all.Err()
}

// SuiteResult is the outcome of one pipeline of a suite.
type SuiteResult struct {
	Pipeline SuitePipeline
	// Err is why the pipeline did not load or failed (an AssertEqual's diff), nil when it passed.
	Err error
}

// Run provides the fixtures and runs the pipelines in order, each to its end, loaded with o;
// it stops at the first that fails, as Beam's test does, and returns the results so far. The
// fixtures are removed at the end.
func (s *Suite) Run(ctx context.Context, o runner.LoadOptions) ([]SuiteResult, error) {
	vars := map[string]string{}
	for _, f := range s.Fixtures {
		dir, err := os.MkdirTemp("", "sluice-"+f.Name+"-")
		if err != nil {
			return nil, fmt.Errorf("fixture %s: %w", f.Name, err)
		}
		defer os.RemoveAll(dir)
		vars[f.Name] = dir
	}
	var results []SuiteResult
	for _, p := range s.Pipelines {
		o.Source = substitute(p.Source, vars)
		plan, err := runner.LoadWith(s.Path, o)
		if err == nil {
			_, err = runner.Execute(ctx, plan, runner.RunConfig{})
		}
		results = append(results, SuiteResult{Pipeline: p, Err: err})
		if err != nil {
			break
		}
	}
	return results, nil
}
