package mapping

import (
	"context"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// FlattenConfig is the (empty) config of Flatten.
type FlattenConfig struct{}

func init() {
	component.RegisterTransform("Flatten", "Merges its inputs into one output whose schema is the union of theirs.",
		component.Inputs{Min: 1, Max: -1}, buildFlatten)
}

// flatten remaps each input's rows to the union schema: cols[input][j] is the input field
// of union field j, or -1 (null).
type flatten struct {
	out   *schemas.Schema
	cols  [][]int
	widen [][]bool // widen[input][j]: convert an integer to a number
	asIs  []bool   // the input's rows already have the union's layout
}

func buildFlatten(ctx *component.Context, _ *FlattenConfig) (component.Transform, error) {
	var fields []schemas.Field
	index := map[string]int{}
	from := map[string]string{} // field name -> the input that first had it
	for _, in := range ctx.Inputs {
		for _, f := range in.Schema.Fields {
			j, seen := index[f.Name]
			if !seen {
				index[f.Name] = len(fields)
				from[f.Name] = in.Name
				f.Nullable = true
				fields = append(fields, f)
				continue
			}
			t, ok := unify(fields[j].Type, f.Type)
			if !ok {
				ctx.Errorf(ctx.Pos, "%s cannot merge field %q: it is %s in input %q but %s in input %q",
					ctx.Describe(), f.Name, fields[j].Type.Articled(), from[f.Name], f.Type.Articled(), in.Name)
				continue
			}
			fields[j].Type = t
		}
	}
	t := &flatten{out: schemas.New(fields...)}
	for _, in := range ctx.Inputs {
		cols := make([]int, len(fields))
		widen := make([]bool, len(fields))
		asIs := len(in.Schema.Fields) == len(fields)
		for j, f := range fields {
			i, ok := in.Schema.Index(f.Name)
			if !ok {
				i = -1
			} else {
				widen[j] = f.Type.Kind == schemas.Float64 && in.Schema.Fields[i].Type.Kind == schemas.Int64
			}
			cols[j] = i
			asIs = asIs && i == j && !widen[j]
		}
		t.cols, t.widen, t.asIs = append(t.cols, cols), append(t.widen, widen), append(t.asIs, asIs)
	}
	ctx.Output(component.Main, t.out)
	return t, nil
}

// unify returns the type that holds the values of both a and b: either when they are the
// same, Any when one is Any, number for integer and number.
func unify(a, b schemas.Type) (schemas.Type, bool) {
	switch {
	case a.Equal(b):
		return a, true
	case a.Kind == schemas.Any || b.Kind == schemas.Any:
		return schemas.Type{Kind: schemas.Any}, true
	case (a.Kind == schemas.Int64 || a.Kind == schemas.Float64) && (b.Kind == schemas.Int64 || b.Kind == schemas.Float64):
		return schemas.Type{Kind: schemas.Float64}, true
	}
	return schemas.Type{}, false
}

func (t *flatten) Process(_ context.Context, input int, in *schemas.Batch, emit component.Emit) error {
	if len(in.Rows) == 0 {
		return nil
	}
	if t.asIs[input] {
		return emit(component.Main, &schemas.Batch{Schema: t.out, Rows: in.Rows, Pos: in.Pos, Time: in.Time})
	}
	cols, widen := t.cols[input], t.widen[input]
	width := len(cols)
	cells := make([]any, len(in.Rows)*width)
	rows := make([]schemas.Row, len(in.Rows))
	for i, src := range in.Rows {
		row := schemas.Row(cells[i*width : (i+1)*width : (i+1)*width])
		for j, c := range cols {
			if c < 0 {
				continue
			}
			row[j] = src[c]
			if n, ok := row[j].(int64); ok && widen[j] {
				row[j] = float64(n)
			}
		}
		rows[i] = row
	}
	return emit(component.Main, &schemas.Batch{Schema: t.out, Rows: rows, Pos: in.Pos, Time: in.Time})
}
