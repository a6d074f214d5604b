package expr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Spec is an expression as it stands in a config: its text, or Beam's mapping form
// {expression: ..., output_type: ...}.
type Spec struct {
	Expr component.Expr
	// OutputType is the declared type of the result, nil when not given.
	OutputType *schemas.Type
	// Kind says whether Expr is an expression, a callable or a file's text (Beam's path).
	Kind SourceKind
	// Name is the function to call in a file (Beam's name).
	Name string
}

// mappingForm is Beam's mapping form of an expression.
type mappingForm struct {
	Expression component.Expr `yaml:"expression" doc:"The expression."`
	Callable   component.Expr `yaml:"callable" doc:"A function taking the row: in Python a def or a lambda, in JavaScript a function or an arrow function."`
	Path       string         `yaml:"path" doc:"A .py or .js file (by the language) defining the function called name; relative to the pipeline file."`
	Name       string         `yaml:"name" doc:"The function of path to call."`
	OutputType yaml.Node      `yaml:"output_type" doc:"The type of the result (integer, number, string, boolean, or a JSON Schema); the result is converted to it."`
}

// DecodeSpec reads an expression given as text or as {expression, output_type}. Problems
// are reported through d, owner naming the component in them (e.g. "Filter 'big'"); ok is
// false when there were any.
func DecodeSpec(d *component.Decoder, n *yaml.Node, owner string) (s Spec, ok bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return Spec{}.withExpr(d, n, owner)
	}
	var m mappingForm
	if !d.Decode(n, &m, owner) {
		return Spec{}, false
	}
	if s, ok = m.source(d, n, owner); !ok {
		return Spec{}, false
	}
	if m.OutputType.Kind != 0 {
		t, err := ParseOutputType(&m.OutputType)
		if err != nil {
			msg := err.Error()
			var se *schemas.SchemaError
			if errors.As(err, &se) {
				msg = se.Msg
			}
			d.Errorf(outputTypePos(d, &m.OutputType, err), "output_type: %s", msg)
			return Spec{}, false
		}
		s.OutputType = &t
	}
	return s, true
}

// source checks that m gives exactly one of expression, callable and path (with name), and
// reads the file of path.
func (m *mappingForm) source(d *component.Decoder, n *yaml.Node, owner string) (Spec, bool) {
	var given []string
	for key, set := range map[string]bool{"expression": m.Expression.Node != nil, "callable": m.Callable.Node != nil, "path": m.Path != ""} {
		if set {
			given = append(given, key)
		}
	}
	switch {
	case len(given) == 0:
		d.Errorf(d.At(n), "%s needs one of expression, callable or path (with name)", owner)
		return Spec{}, false
	case len(given) > 1:
		sort.Strings(given)
		d.Errorf(d.At(n), "%s takes one of expression, callable and path, not %s", owner, strings.Join(given, " and "))
		return Spec{}, false
	case m.Callable.Node != nil:
		return Spec{Expr: m.Callable, Kind: KindCallable}, true
	case m.Path != "":
		return m.file(d, n)
	}
	return Spec{Expr: m.Expression}, true
}

// file reads the code file of path, relative to the pipeline file's directory.
func (m *mappingForm) file(d *component.Decoder, n *yaml.Node) (Spec, bool) {
	at := d.At(component.MappingValue(n, "path"))
	if m.Name == "" {
		d.Errorf(d.At(n), "path needs name: the function of %s to call", m.Path)
		return Spec{}, false
	}
	path := m.Path
	if !filepath.IsAbs(path) && d.File != "" {
		path = filepath.Join(filepath.Dir(d.File), path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		d.Errorf(at, "cannot read the file: %v", err)
		return Spec{}, false
	}
	e := component.Expr{Text: string(text), Pos: diag.Pos{File: path, Line: 1, Col: 1}, Block: true}
	return Spec{Expr: e, Kind: KindFile, Name: m.Name}, true
}

func (s Spec) withExpr(d *component.Decoder, n *yaml.Node, owner string) (Spec, bool) {
	if !d.Decode(n, &s.Expr, owner) {
		return Spec{}, false
	}
	return s, true
}

// Compile compiles the expression with its output type.
func (s Spec) Compile(in *schemas.Schema, o Options) (*Program, error) {
	if s.OutputType != nil {
		o.OutputType = s.OutputType
	}
	if s.Kind == KindExpression {
		return Compile(s.Expr, in, o)
	}
	what := "callable"
	if s.Kind == KindFile {
		what, o.Lines = "path", nil // positions are the file's own
	}
	lang := strings.ToLower(o.Language)
	switch lang {
	case "", "python":
		lang = "python"
	case "generic", "expr":
		return nil, diag.Diagnostic{Pos: s.Expr.Pos, Summary: what + " needs language: python or javascript",
			Detail: "a callable is Python or JavaScript code; set the language on the transform"}
	}
	eng := engineFor(lang)
	if eng == nil {
		return nil, diag.Diagnostic{Pos: s.Expr.Pos, Summary: fmt.Sprintf("%s needs the %s engine, which this build lacks", what, lang)}
	}
	return compileDynamic(eng, Source{Kind: s.Kind, Expr: s.Expr, Name: s.Name}, in, o)
}

// ParseOutputType reads an output_type: a JSON Schema type name (boolean, integer, number,
// string, ...) or a JSON Schema mapping such as {type: array, items: {type: string}}.
func ParseOutputType(n *yaml.Node) (schemas.Type, error) {
	t := n
	if n.Kind == yaml.ScalarNode {
		t = mapping(n.Line, n.Column, "type", n)
	}
	root := mapping(n.Line, n.Column,
		"type", scalar(n, "object"),
		"properties", mapping(n.Line, n.Column, "value", t),
		"required", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{scalar(n, "value")}})
	s, err := schemas.ParseJSONSchema(root)
	if err != nil {
		var se *schemas.SchemaError
		if errors.As(err, &se) {
			msg := se.Msg
			if p := strings.TrimPrefix(strings.TrimPrefix(se.Path, "value"), "."); p != "" {
				msg = "property " + `"` + p + `": ` + msg
			}
			return schemas.Type{}, &schemas.SchemaError{Line: se.Line, Column: se.Column, Msg: msg}
		}
		return schemas.Type{}, err
	}
	return s.Fields[0].Type, nil
}

// outputTypePos places an output_type error at the node it is about.
func outputTypePos(d *component.Decoder, n *yaml.Node, err error) diag.Pos {
	var se *schemas.SchemaError
	if errors.As(err, &se) && se.Line > 0 {
		return diag.Pos{File: d.File, Line: se.Line, Col: se.Column}
	}
	return d.At(n)
}

func scalar(at *yaml.Node, v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: at.Line, Column: at.Column}
}

// mapping builds a mapping node from key, value pairs.
func mapping(line, col int, kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: col}
	for i := 0; i+1 < len(kv); i += 2 {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i].(string), Line: line, Column: col}
		m.Content = append(m.Content, key, kv[i+1].(*yaml.Node))
	}
	return m
}
