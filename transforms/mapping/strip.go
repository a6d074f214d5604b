package mapping

import (
	"context"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// StripConfig is the (empty) config of StripErrorMetadata.
type StripConfig struct{}

// errorFields are the fields that hold the failed record in error rows, in Beam's order:
// IO transforms' failed_row, mapping transforms' element, and record.
var errorFields = []string{"failed_row", "element", "record"}

func init() {
	component.RegisterTransform("StripErrorMetadata",
		"Turns error-output rows back into the records that failed, without the error's message, stack and source, e.g. to process them again.",
		component.Inputs{Min: 1, Max: 1}, buildStrip)
}

// strip emits the failed record of each error row: field col of the input. A struct's fields
// become the row's; another value (an undecodable payload) becomes a row of one field,
// element, as Beam names a plain value.
type strip struct {
	col    int
	out    *schemas.Schema
	fields []string // the struct's field names, or nil for a plain value
}

func buildStrip(ctx *component.Context, _ *StripConfig) (component.Transform, error) {
	in := ctx.Input()
	col := -1
	for _, name := range errorFields {
		if i, ok := in.Index(name); ok {
			col = i
			break
		}
	}
	if col < 0 {
		ctx.Errorf(ctx.Pos, "%s reads error rows, but its input has no field %s", ctx.Describe(), strings.Join(errorFields, ", "))
		return nil, nil
	}
	f := in.Fields[col]
	s := &strip{col: col}
	if f.Type.Kind == schemas.Struct {
		s.out = schemas.New(f.Type.Fields...)
		for _, sf := range f.Type.Fields {
			s.fields = append(s.fields, sf.Name)
		}
	} else {
		s.out = schemas.New(schemas.Field{Name: "element", Type: f.Type, Nullable: true})
	}
	ctx.Output(component.Main, s.out)
	return s, nil
}

func (s *strip) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out := outBatch(s.out, in, len(in.Rows))
	for i, row := range in.Rows {
		v := row[s.col]
		if s.fields == nil {
			add(out, in, i, schemas.Row{v})
			continue
		}
		m, _ := v.(map[string]any) // a null record gives a row of nulls: it is not dropped
		r := make(schemas.Row, len(s.fields))
		for j, name := range s.fields {
			r[j] = m[name]
		}
		add(out, in, i, r)
	}
	return emitRows(emit, component.Main, out)
}
