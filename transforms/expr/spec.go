package expr

import (
	"errors"
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
}

// mappingForm is Beam's mapping form of an expression.
type mappingForm struct {
	Expression component.Expr `yaml:"expression" required:"true" doc:"The expression."`
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
	s.Expr = m.Expression
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
	return Compile(s.Expr, in, o)
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
