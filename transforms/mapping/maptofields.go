package mapping

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// MapToFieldsConfig is the config of MapToFields.
type MapToFieldsConfig struct {
	Fields        yaml.Node                `yaml:"fields" doc:"Output fields: name to an expression, {expression, output_type}, or an input field name (a rename, which keeps the field's type)."`
	Append        bool                     `yaml:"append" doc:"Keep the input fields; fields of the same name are replaced in place."`
	Drop          []string                 `yaml:"drop" doc:"Input fields to leave out (with append)."`
	Language      string                   `yaml:"language" doc:"Expression language: generic (default, expr-lang), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records whose expressions fail to this output instead of stopping."`
}

func init() {
	component.RegisterTransform("MapToFields", "Computes new fields from expressions over each record.",
		component.Inputs{Min: 1, Max: 1}, buildMapToFields)
}

// mapToFields computes each output field from the input row: col[j] >= 0 copies input
// field col[j], otherwise program prog[j] computes it.
type mapToFields struct {
	who    string
	out    *schemas.Schema
	col    []int
	prog   []int
	names  []string
	ev     *expr.Evaluator
	errors *component.ErrorOutput
}

func buildMapToFields(ctx *component.Context, cfg *MapToFieldsConfig) (component.Transform, error) {
	in := ctx.Input()
	opts, ok := expr.OptionsFor(ctx, cfg.Language)
	fields := computedFields(ctx, cfg, in, opts)
	dropped := droppedFields(ctx, cfg, in, fields)
	if !ok || fields == nil || dropped == nil {
		return nil, nil
	}
	t := &mapToFields{who: ctx.Describe()}
	var progs []*expr.Program
	var out []schemas.Field
	addComputed := func(c computed) {
		t.names = append(t.names, c.name)
		if i, isField := c.prog.Field(); isField && c.prog.Type().Equal(in.Fields[i].Type) {
			t.col, t.prog = append(t.col, i), append(t.prog, -1)
		} else {
			t.col, t.prog = append(t.col, -1), append(t.prog, len(progs))
			progs = append(progs, c.prog)
		}
		out = append(out, schemas.Field{Name: c.name, Type: c.prog.Type(), Nullable: c.prog.Nullable()})
	}
	placed := map[string]bool{}
	if cfg.Append {
		for i, f := range in.Fields {
			if dropped[f.Name] {
				continue
			}
			if c, ok := fields.byName[f.Name]; ok {
				addComputed(c)
				placed[f.Name] = true
				continue
			}
			t.names = append(t.names, f.Name)
			t.col, t.prog = append(t.col, i), append(t.prog, -1)
			out = append(out, f)
		}
	}
	for _, c := range fields.list {
		if !placed[c.name] {
			addComputed(c)
		}
	}
	t.out = schemas.New(out...)
	t.ev = expr.NewEvaluator(in, progs...)
	t.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	ctx.Output(component.Main, t.out)
	return t, nil
}

type computed struct {
	name string
	prog *expr.Program
}

type computedSet struct {
	list   []computed
	byName map[string]computed
}

// computedFields compiles the fields mapping; nil when it has errors.
func computedFields(ctx *component.Context, cfg *MapToFieldsConfig, in *schemas.Schema, o expr.Options) *computedSet {
	n := &cfg.Fields
	set := &computedSet{byName: map[string]computed{}}
	switch {
	case n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"):
		if !cfg.Append {
			ctx.Errorf(ctx.KeyPos("fields"), "%s needs config key \"fields\" (or append: true)", ctx.Describe())
			return nil
		}
		return set
	case n.Kind != yaml.MappingNode:
		ctx.Errorf(ctx.At(n), "\"fields\" must be a mapping of field names to expressions")
		return nil
	}
	good := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := set.byName[k.Value]; dup {
			ctx.Errorf(ctx.At(k), "field %q is defined twice", k.Value)
			good = false
			continue
		}
		p := expr.CompileAt(ctx, v, in, o)
		if p == nil {
			good = false
			continue
		}
		c := computed{name: k.Value, prog: p}
		set.list = append(set.list, c)
		set.byName[c.name] = c
	}
	if !good {
		return nil
	}
	return set
}

// droppedFields checks drop and returns its fields as a set; nil when it has errors.
func droppedFields(ctx *component.Context, cfg *MapToFieldsConfig, in *schemas.Schema, fields *computedSet) map[string]bool {
	dropped := map[string]bool{}
	if len(cfg.Drop) == 0 {
		return dropped
	}
	if !cfg.Append {
		ctx.Errorf(ctx.KeyPos("drop"), "drop needs append: true (without append only the listed fields are kept)")
		return nil
	}
	items := component.MappingValue(ctx.Config, "drop")
	good := true
	for i, name := range cfg.Drop {
		pos := ctx.KeyPos("drop")
		if items != nil && items.Kind == yaml.SequenceNode && i < len(items.Content) {
			pos = ctx.At(items.Content[i])
		}
		if _, ok := in.Field(name); !ok {
			ctx.Errorf(pos, "cannot drop unknown field %q%s", name, diag.DidYouMean(name, in.Names())).
				Detail = "input fields: " + strings.Join(in.Names(), ", ")
			good = false
		} else if fields != nil {
			if _, redefined := fields.byName[name]; redefined {
				ctx.Errorf(pos, "field %q is both dropped and defined in fields", name)
				good = false
			}
		}
		dropped[name] = true
	}
	if !good {
		return nil
	}
	return dropped
}

func (t *mapToFields) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	n, width := len(in.Rows), len(t.col)
	out := outBatch(t.out, in, n)
	cells := make([]any, n*width)
	var errs *schemas.Batch
	s := t.ev.Scope()
	defer s.Release()
rows:
	for i, src := range in.Rows {
		s.Bind(src)
		row := schemas.Row(cells[i*width : (i+1)*width : (i+1)*width])
		for j, c := range t.col {
			if c >= 0 {
				row[j] = src[c]
				continue
			}
			v, err := s.Eval(t.prog[j])
			if err != nil {
				var stop error
				errs, stop = failure(t.errors, errs, in, i, fmt.Sprintf("%s field %q", t.who, t.names[j]), err)
				if stop != nil {
					return stop
				}
				continue rows
			}
			row[j] = v
		}
		add(out, in, i, row)
	}
	if err := emitRows(emit, component.Main, out); err != nil {
		return err
	}
	return t.errors.Emit(errs, emit)
}
