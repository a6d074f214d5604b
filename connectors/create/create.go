package create

import (
	"context"
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
	for i, n := range elements {
		row, err := toRow(n, schema)
		if err != nil {
			ctx.Errorf(ctx.At(n), "element %d: %v", i+1, err)
			continue
		}
		s.rows = append(s.rows, row)
	}
	ctx.Output(component.Main, schema)
	return s, nil
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

// Decode passes the batch on: its rows are decoded already.
func (s *Source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	if len(b.Rows) == 0 {
		return nil
	}
	return emit(component.Main, b)
}

// Close does nothing.
func (s *Source) Close() error { return nil }
