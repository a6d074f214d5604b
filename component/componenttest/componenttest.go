package componenttest

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// DefaultFile is the file name positions carry when an Env sets none.
const DefaultFile = "p.yaml"

// Env is what a snippet is built in: the name of the file it stands for and the names the
// component and its inputs have in the pipeline. The zero Env is ready to use.
type Env struct {
	// File is the file name of positions and diagnostics; DefaultFile when empty.
	File string
	// Name is the component's name; its type when empty.
	Name string
	// Inputs names the inputs in order; an input without a name here is "in0", "in1", ...
	Inputs []string
	// Options are the runner options the component is built with (Options.Delivery: the
	// zero value is exactly_once).
	Options component.Options
}

// Built is a component built from a snippet.
type Built struct {
	// Component is what the registry built (a component.Transform, Source or Sink), or nil
	// when the config has errors.
	Component any
	// Spec is the component's registration.
	Spec *component.Spec
	// Context is the context the component was built in.
	Context *component.Context
	// Outputs are the outputs the component declared.
	Outputs []component.Output
	// Diags are the diagnostics sorted by position, each as the runner prints it:
	// "file:line:col: message", followed by "\n\thint: ..." when it has a hint.
	Diags []string

	err error
}

// Err returns the diagnostics as the runner's error (a diag.List sorted by position), or nil
// when there are none.
func (b *Built) Err() error { return b.err }

// Parse parses src, a YAML mapping, and returns a Decoder for it (File from e, Lines from
// src, no diagnostics yet) and its root mapping node. It fails t when src is not YAML.
func (e Env) Parse(t testing.TB, src string) (*component.Decoder, *yaml.Node) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		t.Fatalf("empty test YAML")
	}
	file := e.File
	if file == "" {
		file = DefaultFile
	}
	d := &component.Decoder{File: file, Lines: strings.Split(src, "\n"), Diags: &diag.List{}}
	return d, doc.Content[0]
}

// Build builds the component of type typ that the snippet src describes against the input
// schemas, through the registry and with a Decoder that knows the snippet, as the runner
// does. The config is the snippet's config key; an empty typ takes the snippet's type key.
// It fails t when src is not YAML or the type is not registered; config problems are in the
// result's Diags.
func (e Env) Build(t testing.TB, typ, src string, inputs ...*schemas.Schema) *Built {
	t.Helper()
	d, root := e.Parse(t, src)
	if typ == "" {
		n := component.MappingValue(root, "type")
		if n == nil {
			t.Fatalf("test YAML without a type")
		}
		typ = n.Value
	}
	spec, ok := component.Lookup(typ)
	if !ok {
		t.Fatalf("%s is not registered", typ)
	}
	name := e.Name
	if name == "" {
		name = typ
	}
	ctx := &component.Context{Decoder: d, Type: typ, Name: name, Pos: d.At(root),
		Config: component.MappingValue(root, "config"), Options: e.Options}
	for i, s := range inputs {
		in := "in" + strconv.Itoa(i)
		if i < len(e.Inputs) {
			in = e.Inputs[i]
		}
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: in, Schema: s})
	}
	b := &Built{Component: spec.Build(ctx), Spec: spec, Context: ctx}
	b.Outputs = ctx.Outputs()
	if err := d.Diags.Err(); err != nil {
		b.err = err
		for _, dg := range err.(diag.List) {
			b.Diags = append(b.Diags, dg.Error())
		}
	}
	return b
}

// Emitted records the batches a component emits, by output tag. Its Emit method is a
// component.Emit; it is not safe for concurrent use.
type Emitted map[string][]*schemas.Batch

// Emit records b under tag.
func (e Emitted) Emit(tag string, b *schemas.Batch) error {
	e[tag] = append(e[tag], b)
	return nil
}

// Rows returns the rows emitted on tag, in order.
func (e Emitted) Rows(tag string) []schemas.Row {
	var rows []schemas.Row
	for _, b := range e[tag] {
		rows = append(rows, b.Rows...)
	}
	return rows
}

// Positions returns the positions of the rows emitted on tag, in order.
func (e Emitted) Positions(tag string) []schemas.Position {
	var pos []schemas.Position
	for _, b := range e[tag] {
		pos = append(pos, b.Pos...)
	}
	return pos
}

// ReadAll reads the open source src until io.EOF and decodes every batch with emit, as a
// runner lane would. It returns the first error of Read or Decode, or ctx's error when ctx
// is done.
func ReadAll(ctx context.Context, src component.Source, emit component.Emit) error {
	for {
		b, err := src.Read(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if b == nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		if err := src.Decode(ctx, b, emit); err != nil {
			return err
		}
	}
}
