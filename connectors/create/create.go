package create

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Config is the config of Create.
type Config struct {
	Elements  yaml.Node `yaml:"elements" required:"true" doc:"The records: a list of mappings (field: value), or of plain values, which become records with one field named element."`
	Reshuffle bool      `yaml:"reshuffle" doc:"Accepted for Beam compatibility; it has no effect."`
	// OutputSchema is Beam's output_schema: the schema the elements must fit.
	OutputSchema *yaml.Node `yaml:"output_schema" doc:"A JSON Schema (Beam's subset, as for ReadFromKafka's schema) the elements must fit, which is then the output's schema instead of the inferred one. An element that does not fit is a validation error, or, with error_handling: {output: name} inside output_schema (Beam's place for it), goes to that output as {element, msg, stack}."`
}

// BatchSize is the most rows one Read returns.
const BatchSize = 1000

// EventTime is the event time of every created record: the Unix epoch, so that runs are
// reproducible (use AssignTimestamps for another).
var EventTime = time.Unix(0, 0).UTC()

func init() {
	component.RegisterSource("Create", "Emits the records listed in the pipeline file.", build)
}

// Source reads the elements of a Create. Its offsets are element indexes in partition 0 of
// source "create:" + the transform's name.
type Source struct {
	source string
	schema *schemas.Schema
	rows   []schemas.Row
	next   int
	// With output_schema's error_handling: the elements that do not fit it (their rows are
	// nil), as rows of raw, for the error output eo.
	misfits map[int]misfit
	raw     *schemas.Schema
	eo      *component.ErrorOutput
}

// misfit is an element that does not fit output_schema: as written, and why.
type misfit struct {
	row schemas.Row
	err error
}

func build(ctx *component.Context, cfg *Config) (component.Source, error) {
	elements, ok := elementNodes(ctx, &cfg.Elements)
	if !ok {
		return nil, nil
	}
	schema, err := schemas.InferYAML(elements)
	if err != nil {
		ctx.Errorf(ctx.KeyPos("elements"), "cannot infer a schema from the elements: %v", err)
		return nil, nil
	}
	s := &Source{source: "create:" + ctx.Name, schema: schema, rows: make([]schemas.Row, 0, len(elements))}
	if cfg.OutputSchema != nil {
		if !s.useOutputSchema(ctx, cfg.OutputSchema) {
			return nil, nil
		}
	}
	for i, n := range elements {
		row, err := toRow(n, s.schema)
		if err == nil && s.raw != nil {
			err = extraField(n, s.schema)
		}
		switch {
		case err != nil && s.eo != nil:
			raw, rerr := toRow(n, s.raw)
			if rerr != nil {
				ctx.Errorf(ctx.At(n), "element %d: %v", i+1, rerr)
				continue
			}
			if s.misfits == nil {
				s.misfits = map[int]misfit{}
			}
			s.misfits[i] = misfit{row: raw, err: fmt.Errorf("%s: element %d does not fit output_schema: %w", ctx.Describe(), i+1, err)}
		case err != nil && s.raw != nil:
			ctx.Errorf(ctx.At(n), "element %d does not fit output_schema: %v", i+1, err).
				Detail = "fix the element or the schema, or add error_handling: {output: name} inside output_schema to send such elements there"
			continue
		case err != nil:
			ctx.Errorf(ctx.At(n), "element %d: %v", i+1, err)
			continue
		}
		s.rows = append(s.rows, row) // nil for a misfit: Decode sends it to the error output
	}
	ctx.Output(component.Main, s.schema)
	return s, nil
}

// useOutputSchema makes output_schema at n (less its error_handling key) the output's schema;
// the inferred one stays the schema of the elements that do not fit it.
func (s *Source) useOutputSchema(ctx *component.Context, n *yaml.Node) bool {
	var eh *component.ErrorHandling
	js := n
	if n.Kind == yaml.MappingNode {
		c := *n
		c.Content = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "error_handling" {
				eh = &component.ErrorHandling{}
				if !ctx.Decode(n.Content[i+1], eh, "error_handling") {
					return false
				}
				continue
			}
			c.Content = append(c.Content, n.Content[i], n.Content[i+1])
		}
		js = &c
	}
	out, err := schemas.ParseJSONSchema(js)
	if err != nil {
		at := ctx.KeyPos("output_schema")
		var se *schemas.SchemaError
		if errors.As(err, &se) && se.Line > 0 {
			at.Line, at.Col = se.Line, se.Column
		}
		ctx.Errorf(at, "output_schema: %v", err)
		return false
	}
	s.raw, s.schema = s.schema, out
	s.eo = ctx.ErrorOutput(eh, s.raw, component.MappingShape)
	return true
}

// extraField reports a field of element n that schema s does not have: output_schema lists
// every field of its rows.
func extraField(n *yaml.Node, s *schemas.Schema) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if _, ok := s.Index(n.Content[i].Value); !ok {
			return fmt.Errorf("field %q is not in it", n.Content[i].Value)
		}
	}
	return nil
}

// elementNodes returns the elements as mappings, wrapping plain values as {element: v}.
func elementNodes(ctx *component.Context, n *yaml.Node) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		ctx.Errorf(ctx.At(n), "elements must be a list")
		return nil, false
	}
	out := make([]*yaml.Node, len(n.Content))
	mappings := 0
	for i, e := range n.Content {
		if e.Kind == yaml.AliasNode && e.Alias != nil {
			e = e.Alias
		}
		out[i] = e
		if e.Kind == yaml.MappingNode {
			mappings++
		}
	}
	if mappings > 0 && mappings < len(out) {
		for _, e := range out {
			if e.Kind != yaml.MappingNode {
				ctx.Errorf(ctx.At(e), "elements must be all mappings or all plain values: this one is not a mapping")
				return nil, false
			}
		}
	}
	if mappings == 0 {
		for i, e := range out {
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "element", Line: e.Line, Column: e.Column}
			out[i] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: e.Line, Column: e.Column, Content: []*yaml.Node{key, e}}
		}
	}
	return out, true
}

// toRow converts one element to a row of s.
func toRow(n *yaml.Node, s *schemas.Schema) (schemas.Row, error) {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return nil, err
	}
	row := make(schemas.Row, len(s.Fields))
	for j, f := range s.Fields {
		v, err := schemas.Coerce(m[f.Name], f.Type, f.Nullable)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		row[j] = v
	}
	return row, nil
}

// Open starts at the offset recorded for partition 0, if any.
func (s *Source) Open(_ context.Context, from schemas.Offsets) error {
	s.next = 0
	if n, ok := from.Get(s.source, 0); ok {
		s.next = int(max(0, min(n, int64(len(s.rows)))))
	}
	return nil
}

// Read returns the next elements, up to BatchSize, then io.EOF.
func (s *Source) Read(ctx context.Context) (*schemas.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.next >= len(s.rows) {
		return nil, io.EOF
	}
	end := min(s.next+BatchSize, len(s.rows))
	b := &schemas.Batch{Schema: s.schema, Rows: s.rows[s.next:end:end], Pos: make([]schemas.Position, 0, end-s.next),
		Time: make([]time.Time, 0, end-s.next)}
	for i := s.next; i < end; i++ {
		b.Pos = append(b.Pos, schemas.Position{Source: s.source, Partition: 0, Offset: int64(i)})
		b.Time = append(b.Time, EventTime)
	}
	s.next = end
	return b, nil
}

// Offsets returns the index of the next element to read.
func (s *Source) Offsets() schemas.Offsets {
	o := schemas.Offsets{}
	o.Set(s.source, 0, int64(s.next))
	return o
}

// Decode passes the batch on: its rows are decoded already. The elements that do not fit
// output_schema go to its error output.
func (s *Source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	if len(b.Rows) == 0 {
		return nil
	}
	if len(s.misfits) == 0 {
		return emit(component.Main, b)
	}
	good := &schemas.Batch{Schema: b.Schema}
	var errs *schemas.Batch
	for i, row := range b.Rows {
		m, bad := s.misfits[int(b.Pos[i].Offset)]
		if !bad {
			good.Rows, good.Pos, good.Time = append(good.Rows, row), append(good.Pos, b.Pos[i]), append(good.Time, b.Time[i])
			continue
		}
		one := &schemas.Batch{Schema: s.raw, Rows: []schemas.Row{m.row}, Pos: b.Pos[i : i+1], Time: b.Time[i : i+1]}
		var err error
		if errs, err = s.eo.Add(errs, one, 0, m.err); err != nil {
			return err
		}
	}
	if len(good.Rows) > 0 {
		if err := emit(component.Main, good); err != nil {
			return err
		}
	}
	return s.eo.Emit(errs, emit)
}

// Close does nothing.
func (s *Source) Close() error { return nil }
