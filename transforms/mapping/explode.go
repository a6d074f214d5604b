package mapping

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// ExplodeConfig is the config of Explode.
type ExplodeConfig struct {
	Fields        []string                 `yaml:"fields" required:"true" doc:"Array field (or list of array fields) to explode: one output record per element."`
	CrossProduct  bool                     `yaml:"cross_product" doc:"With several fields, emit every combination of their elements (true, the default) or zip them, padding shorter arrays with null (false)."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records whose fields are not arrays to this output instead of stopping."`
}

// SetDefaults sets cross_product to true, as in Beam.
func (c *ExplodeConfig) SetDefaults() { c.CrossProduct = true }

func init() {
	component.RegisterTransform("Explode", "Emits one record per element of array fields.",
		component.Inputs{Min: 1, Max: 1}, buildExplode)
}

type explode struct {
	who    string
	out    *schemas.Schema
	fields []int
	names  []string
	cross  bool
	errors *component.ErrorOutput
}

func buildExplode(ctx *component.Context, cfg *ExplodeConfig) (component.Transform, error) {
	in := ctx.Input()
	if len(cfg.Fields) == 0 {
		ctx.Errorf(ctx.KeyPos("fields"), "fields must name at least one array field")
		return nil, nil
	}
	out := append([]schemas.Field(nil), in.Fields...)
	t := &explode{who: ctx.Describe(), cross: cfg.CrossProduct}
	items := component.MappingValue(ctx.Config, "fields")
	seen := map[string]bool{}
	for i, name := range cfg.Fields {
		pos := ctx.KeyPos("fields")
		if items != nil && items.Kind == yaml.SequenceNode && i < len(items.Content) {
			pos = ctx.At(items.Content[i])
		}
		j, ok := in.Index(name)
		switch {
		case !ok:
			ctx.Errorf(pos, "cannot explode unknown field %q%s", name, diag.DidYouMean(name, in.Names())).
				Detail = "input fields: " + strings.Join(in.Names(), ", ")
			continue
		case seen[name]:
			ctx.Errorf(pos, "field %q is listed twice", name)
			continue
		case in.Fields[j].Type.Kind != schemas.Array && in.Fields[j].Type.Kind != schemas.Any:
			ctx.Errorf(pos, "cannot explode field %q: it is %s, not an array", name, in.Fields[j].Type.Articled())
			continue
		}
		seen[name] = true
		elem := schemas.Type{Kind: schemas.Any}
		if e := in.Fields[j].Type.Elem; e != nil {
			elem = *e
		}
		out[j] = schemas.Field{Name: name, Type: elem, Nullable: true}
		t.fields, t.names = append(t.fields, j), append(t.names, name)
	}
	t.out = schemas.New(out...)
	t.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	ctx.Output(component.Main, t.out)
	return t, nil
}

func (t *explode) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out := outBatch(t.out, in, len(in.Rows))
	var errs *schemas.Batch
	arrays := make([][]any, len(t.fields))
	for i, row := range in.Rows {
		if err := t.arrays(row, arrays); err != nil {
			var stop error
			if errs, stop = failure(t.errors, errs, in, i, t.who, err); stop != nil {
				return stop
			}
			continue
		}
		if t.cross {
			t.crossProduct(out, in, i, row, arrays, 0)
		} else {
			t.zip(out, in, i, row, arrays)
		}
	}
	if err := emitRows(emit, component.Main, out); err != nil {
		return err
	}
	return t.errors.Emit(errs, emit)
}

// arrays reads the exploded fields of row into arrays.
func (t *explode) arrays(row schemas.Row, arrays [][]any) error {
	for k, j := range t.fields {
		switch v := row[j].(type) {
		case []any:
			arrays[k] = v
		case nil:
			return fmt.Errorf("cannot explode field %q: it is null", t.names[k])
		default:
			return fmt.Errorf("cannot explode field %q: it holds %s, not an array", t.names[k], schemas.Describe(v))
		}
	}
	return nil
}

// crossProduct emits a row for every combination of the elements of arrays[k:], row
// holding the elements chosen so far.
func (t *explode) crossProduct(out, in *schemas.Batch, i int, row schemas.Row, arrays [][]any, k int) {
	if k == len(arrays) {
		add(out, in, i, row)
		return
	}
	for _, v := range arrays[k] {
		next := append(schemas.Row(nil), row...)
		next[t.fields[k]] = v
		t.crossProduct(out, in, i, next, arrays, k+1)
	}
}

// zip emits one row per index up to the longest array, padding the shorter with null.
func (t *explode) zip(out, in *schemas.Batch, i int, row schemas.Row, arrays [][]any) {
	n := 0
	for _, a := range arrays {
		n = max(n, len(a))
	}
	for ix := range n {
		next := append(schemas.Row(nil), row...)
		for k, a := range arrays {
			next[t.fields[k]] = nil
			if ix < len(a) {
				next[t.fields[k]] = a[ix]
			}
		}
		add(out, in, i, next)
	}
}
