package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/templates"
	"github.com/sluicehq/sluice/tools/pipelinetest"
	"gopkg.in/yaml.v3"
)

// The schema an editor gets from `sluice schema` accepts every pipeline the repository holds
// (examples, built-in templates rendered with their tests' parameters, testdata, the pipelines
// in the docs and the README), as an independent validator reads it; and it refuses wrong
// files, so that the test can fail.
func TestSchemaAcceptsEveryPipelineInTheRepository(t *testing.T) {
	sch := compileSchema(t, "schema")
	docs := repositoryPipelines(t)
	if len(docs) < 60 {
		t.Fatalf("found only %d pipelines in the repository; the walk missed some", len(docs))
	}
	for _, d := range docs {
		if err := sch.Validate(d.value); err != nil {
			t.Errorf("%s: sluice schema refuses it:\n%v", d.where, err)
		}
	}
	t.Logf("%d pipelines validated", len(docs))
}

func TestSchemaRefusesWrongFiles(t *testing.T) {
	sch := compileSchema(t, "schema")
	bad := filepath.Join(repoRoot(t), "testdata", "bad")
	cases := []struct {
		file string // in testdata/bad, or the pipeline itself
		at   string // where the validator must say it is wrong
	}{
		{file: "unknown_config_key.yaml", at: "/pipeline/transforms/1/config"},
		{file: "unknown_transform_key.yaml", at: "/pipeline/transforms/0"},
		{file: "unknown_transform.yaml", at: "/pipeline/transforms/1/type"},
		{file: "unknown_pipeline_key.yaml", at: "/pipeline"},
		{file: "bad_enum.yaml", at: "/pipeline/transforms/1/config/level"},
		{file: "no_pipeline.yaml", at: ""},
		{file: "pipeline:\n  - type: Filter\n    config: {keep: true, language: 5}\n", at: "/pipeline/0/config/language"},
		{file: "pipeline:\n  - type: ReadFromKafka\n    config: {topic: [t, 5], bootstrap_servers: b, format: RAW}\n", at: "/pipeline/0/config/topic"},
		{file: "pipeline: {transforms: []}\noptions: {checkpoint_interval: [10s]}\n", at: "/options/checkpoint_interval"},
	}
	for _, c := range cases {
		src, name := []byte(c.file), "inline"
		if strings.HasSuffix(c.file, ".yaml") {
			var err error
			if src, err = os.ReadFile(filepath.Join(bad, c.file)); err != nil {
				t.Fatal(err)
			}
			name = c.file
		}
		v := yamlValues(t, name, src)[0]
		err := sch.Validate(v)
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("%s: the schema accepts it (%v)", name, err)
			continue
		}
		if !slices.Contains(errorLocations(verr), c.at) {
			t.Errorf("%s: the schema refuses it, but not at %q:\n%v", name, c.at, err)
		}
	}
}

// sluice schema TYPE prints that type's config schema, with descriptions and defaults, and
// sluice schema with an unknown type says so with a suggestion.
func TestSchemaOfOneType(t *testing.T) {
	sch := compileSchema(t, "schema", "LogForTesting")
	if err := sch.Validate(map[string]any{"level": "DEBUG", "prefix": "x"}); err != nil {
		t.Errorf("sluice schema LogForTesting refuses a right config: %v", err)
	}
	if err := sch.Validate(map[string]any{"level": "LOUD"}); err == nil {
		t.Error("sluice schema LogForTesting accepts level LOUD")
	}
	_, out, _ := sluice(t, "schema", "ReadFromKafka")
	var s struct {
		Description string
		Properties  map[string]struct {
			Description string
			Default     any
		}
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Description, "ReadFromKafka (source): ") || len(s.Properties) < 5 {
		t.Errorf("sluice schema ReadFromKafka: %s", out)
	}
	if p := s.Properties["format"]; p.Default != "AVRO" {
		t.Errorf("sluice schema ReadFromKafka: format's default is %v, want AVRO (its SetDefaults)", p.Default)
	}
	// Every config key of every type has a description.
	for _, name := range component.Names() {
		_, out, _ := sluice(t, "schema", name)
		var s struct {
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		for key, p := range s.Properties {
			if p.Description == "" {
				t.Errorf("sluice schema %s: config key %s has no description (its doc tag)", name, key)
			}
		}
	}
	if err := sch.Validate(nil); err != nil {
		t.Errorf("sluice schema LogForTesting refuses an empty config: %v", err)
	}
	if _, out, _ := sluice(t, "schema", "Explode"); !strings.Contains(out, `"default": true`) {
		t.Errorf("sluice schema Explode does not give cross_product's default true:\n%s", out)
	}
	code, _, errOut := sluice(t, "schema", "WriteToBigQeury")
	if code != exitUsage || !strings.Contains(errOut, `did you mean "WriteToBigQuery"?`) {
		t.Errorf("sluice schema WriteToBigQeury: exit %d, %s", code, errOut)
	}
}

// compileSchema compiles what sluice prints for args with the independent validator.
func compileSchema(t *testing.T, args ...string) *jsonschema.Schema {
	t.Helper()
	code, out, errOut := sluice(t, args...)
	if code != exitOK {
		t.Fatalf("sluice %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("sluice %s prints no JSON: %v", strings.Join(args, " "), err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sluice.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sluice.schema.json")
	if err != nil {
		t.Fatalf("sluice %s is no valid JSON Schema: %v", strings.Join(args, " "), err)
	}
	return sch
}

// errorLocations lists the instance locations of a validation error and its causes, as JSON
// pointers.
func errorLocations(e *jsonschema.ValidationError) []string {
	out := []string{"/" + strings.Join(e.InstanceLocation, "/")}
	if len(e.InstanceLocation) == 0 {
		out[0] = ""
	}
	for _, c := range e.Causes {
		out = append(out, errorLocations(c)...)
	}
	return out
}

// notPipelines are the YAML files of the repository that hold no pipeline an editor would check
// against the schema, with the reason. Every other YAML file is read: documents whose
// top-level keys include pipeline or pipelines are validated, others are skipped (Kubernetes
// manifests, parameter files, pre-commit hooks).
var notPipelines = map[string]string{
	"testdata/bad":                                 "pipelines that are wrong on purpose; TestSchemaRefusesWrongFiles checks some",
	"internal/yamlfmt/testdata/golden":             "sluice fmt's layout cases: pipeline-shaped text whose transform types and keys are made up",
	"testdata/beam/structure/error_structure.yaml": "structure errors on purpose (unknown keys among them), reported all at once by sluice validate",
}

// templateParams are the parameters of the templates that have neither tests: nor a params
// file, as the Go tests that render them give them.
var templateParams = map[string][]string{
	"templates/testdata/dataflow/yaml/SourceToLog.yaml": {"servers=localhost:9092", "topic=events"}, // templates/layout_test.go
	"cmd/sluice/testdata/diff/template/old.yaml":        {"topic=orders"},                           // its args file
	"cmd/sluice/testdata/diff/template/new.yaml":        {"topic=orders"},
	"cmd/sluice/webui/testdata/live.yaml":               {"out=/tmp/out", "api_key=k"}, // webui_test.go
}

// A pipeline is one pipeline document found in the repository, as JSON values.
type pipeline struct {
	where string
	value any
}

// repositoryPipelines returns every pipeline of the repository, templates rendered.
func repositoryPipelines(t *testing.T) []pipeline {
	t.Helper()
	root := repoRoot(t)
	var out []pipeline
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if _, skip := notPipelines[filepath.ToSlash(rel)]; skip || d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
		case strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, filePipelines(t, rel, src)...)
		case strings.HasSuffix(path, ".md") && (filepath.Dir(rel) == "docs" || rel == "README.md"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, b := range yamlBlocks(src) {
				out = append(out, filePipelines(t, fmt.Sprintf("%s:%d", rel, b.line), b.text)...)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// filePipelines returns the pipelines of one YAML file. A template is rendered with the
// parameters of each of its tests, or of a params file beside it (NAME.params.yaml), or
// with none; a Kubernetes ConfigMap's *.yaml values are read as files.
func filePipelines(t *testing.T, where string, src []byte) []pipeline {
	t.Helper()
	var raw any
	if yaml.Unmarshal(src, &raw) == nil && elided(raw) {
		return nil
	}
	if isTemplate(src) {
		return renderedPipelines(t, where, src)
	}
	var out []pipeline
	for i, v := range yamlValues(t, where, src) {
		m, _ := v.(map[string]any)
		if isPipeline(v) {
			out = append(out, pipeline{fmt.Sprintf("%s (document %d)", where, i+1), v})
		}
		if m["kind"] == "ConfigMap" {
			data, _ := m["data"].(map[string]any)
			for k, v := range data {
				if s, ok := v.(string); ok && strings.HasSuffix(k, ".yaml") {
					out = append(out, filePipelines(t, where+" data "+k, []byte(s))...)
				}
			}
		}
	}
	return out
}

// isPipeline reports whether v is a pipeline file: a mapping with the key pipeline or
// pipelines (Beam's test files). A sketch in the docs that elides parts with "..."
// (pipeline: ..., transforms: [...]) is not one.
func isPipeline(v any) bool {
	m, _ := v.(map[string]any)
	return (m["pipeline"] != nil || m["pipelines"] != nil) && !elided(v)
}

func elided(v any) bool {
	switch v := v.(type) {
	case string:
		return v == "..."
	case []any:
		return slices.ContainsFunc(v, elided)
	case map[string]any:
		for _, e := range v {
			if elided(e) {
				return true
			}
		}
	}
	return false
}

var jinja = regexp.MustCompile(`\{\{|\{%`)

// isTemplate reports whether src is rendered before it is read: it has a template header or
// Jinja tags.
func isTemplate(src []byte) bool {
	return jinja.Match(src) || bytes.HasPrefix(src, []byte("template:")) || bytes.Contains(src, []byte("\ntemplate:"))
}

func renderedPipelines(t *testing.T, where string, src []byte) []pipeline {
	t.Helper()
	path, _, _ := strings.Cut(where, ":") // a docs block renders as its .md file
	sets := map[string][]templates.Param{"no parameters": nil}
	if given, ok := templateParams[path]; ok {
		sets = map[string][]templates.Param{"parameters its tests give": nil}
		for _, a := range given {
			p, err := templates.ParseAssignment(a, "-p")
			if err != nil {
				t.Fatal(err)
			}
			sets["parameters its tests give"] = append(sets["parameters its tests give"], p)
		}
	}
	tests, err := pipelinetest.Read(path, src)
	if err != nil {
		t.Errorf("%s: reading its tests: %v", where, err)
	}
	if len(tests) > 0 {
		delete(sets, "no parameters")
	}
	for _, tc := range tests {
		sets["test "+tc.Name] = tc.Params
	}
	params := strings.TrimSuffix(filepath.Join(repoRoot(t), path), filepath.Ext(path)) + ".params.yaml"
	if _, err := os.Stat(params); err == nil {
		ps, err := templates.ReadParamsFile(params)
		if err != nil {
			t.Fatal(err)
		}
		sets = map[string][]templates.Param{"parameters of " + filepath.Base(params): ps}
	}
	var out []pipeline
	for name, ps := range sets {
		r, err := templates.Render(filepath.Join(repoRoot(t), path), src, templates.Input{Params: ps})
		if err != nil {
			t.Errorf("%s: rendering it with the %s: %v", where, name, err)
			continue
		}
		var vals []any
		if doc := r.DisplayDoc(); doc != nil {
			v, err := jsonValue(doc)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			vals = []any{v}
		} else {
			vals = yamlValues(t, where, []byte(r.Display()))
		}
		for _, v := range vals {
			if isPipeline(v) {
				out = append(out, pipeline{where + " rendered with the " + name, v})
			}
		}
	}
	return out
}

// A yamlBlock is a ```yaml block of a Markdown file.
type yamlBlock struct {
	line int
	text []byte
}

var fence = regexp.MustCompile("(?ms)^```ya?ml[^\n]*\n(.*?)^```")

func yamlBlocks(md []byte) []yamlBlock {
	var out []yamlBlock
	for _, m := range fence.FindAllSubmatchIndex(md, -1) {
		out = append(out, yamlBlock{line: bytes.Count(md[:m[0]], []byte("\n")) + 1, text: md[m[2]:m[3]]})
	}
	return out
}

// yamlValues parses every document of src into JSON values, as an editor's YAML language
// server hands them to a JSON Schema validator.
func yamlValues(t *testing.T, where string, src []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var out []any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err != nil {
			if err.Error() != "EOF" {
				t.Errorf("%s: not YAML: %v", where, err)
			}
			return out
		}
		v, err := jsonValue(&n)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return out
		}
		out = append(out, v)
	}
}

// jsonValue converts a YAML node to the JSON value it stands for: anchors resolved, merge
// keys merged, timestamps and other scalars that JSON lacks as strings.
func jsonValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return jsonValue(n.Content[0])
	case yaml.AliasNode:
		return jsonValue(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := jsonValue(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		var merged []map[string]any
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := jsonValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if n.Content[i].Tag == "!!merge" {
				switch v := v.(type) {
				case map[string]any:
					merged = append(merged, v)
				case []any:
					for _, m := range v {
						m, _ := m.(map[string]any)
						merged = append(merged, m)
					}
				}
				continue
			}
			out[n.Content[i].Value] = v
		}
		for _, m := range merged {
			for k, v := range m {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
		return out, nil
	}
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool", "!!float":
		var v any
		err := n.Decode(&v)
		return v, err
	case "!!int":
		var v int64
		if err := n.Decode(&v); err != nil {
			return n.Value, nil // beyond int64: JSON has no such number either
		}
		return json.Number(fmt.Sprint(v)), nil
	}
	return n.Value, nil
}
