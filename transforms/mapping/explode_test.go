package mapping

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

var pairs = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "xs", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.Int64}}},
	schemas.Field{Name: "ys", Type: strArray, Nullable: true},
	schemas.Field{Name: "any", Type: typ(schemas.Any), Nullable: true},
)

func TestExplode(t *testing.T) {
	in := batch(pairs,
		schemas.Row{int64(1), []any{int64(1), int64(2)}, []any{"a", "b", "c"}, nil},
		schemas.Row{int64(2), []any{}, []any{"z"}, nil})
	tests := []struct {
		name, config, schema string
		rows                 []schemas.Row
	}{
		{"one field", "config: {fields: xs}", "{id integer, xs integer?, ys array<string>?, any any?}", []schemas.Row{
			{int64(1), int64(1), []any{"a", "b", "c"}, nil}, {int64(1), int64(2), []any{"a", "b", "c"}, nil}}},
		{"cross product", "config: {fields: [xs, ys]}", "{id integer, xs integer?, ys string?, any any?}", []schemas.Row{
			{int64(1), int64(1), "a", nil}, {int64(1), int64(1), "b", nil}, {int64(1), int64(1), "c", nil},
			{int64(1), int64(2), "a", nil}, {int64(1), int64(2), "b", nil}, {int64(1), int64(2), "c", nil}}},
		{"zip", "config: {fields: [xs, ys], cross_product: false}", "{id integer, xs integer?, ys string?, any any?}", []schemas.Row{
			{int64(1), int64(1), "a", nil}, {int64(1), int64(2), "b", nil}, {int64(1), nil, "c", nil},
			{int64(2), nil, "z", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ctx := mustBuild(t, "Explode", tt.config, pairs)
			if got := outputSchema(t, ctx, component.Main).String(); got != tt.schema {
				t.Errorf("schema %s, want %s", got, tt.schema)
			}
			out, err := run(t, tr, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Rows(component.Main); !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows\n got %v\nwant %v", got, tt.rows)
			}
			for _, b := range out[component.Main] {
				if b.Pos[0].Offset != 100 {
					t.Errorf("first exploded row has position %v", b.Pos[0])
				}
			}
		})
	}
}

// A null array or a non-array in an untyped field is an error for the record, as in Beam.
func TestExplodeBadValues(t *testing.T) {
	tr, _ := mustBuild(t, "Explode", "config: {fields: [ys, any], error_handling: {output: errs}}", pairs)
	out, err := run(t, tr, batch(pairs,
		schemas.Row{int64(1), []any{}, nil, []any{1}},
		schemas.Row{int64(2), []any{}, []any{"a"}, "x"},
		schemas.Row{int64(3), []any{}, []any{"a"}, []any{true}}))
	if err != nil {
		t.Fatal(err)
	}
	errs := out.Rows("errs")
	if len(errs) != 2 || errs[0][1] != `Explode 'step': cannot explode field "ys": it is null` ||
		errs[1][1] != `Explode 'step': cannot explode field "any": it holds the string "x", not an array` {
		t.Errorf("errors %v", errs)
	}
	if got := out.Rows(component.Main); len(got) != 1 || got[0][3] != true {
		t.Errorf("rows %v", got)
	}
}

func TestExplodeConfigErrors(t *testing.T) {
	tests := []struct{ config, want string }{
		{"config: {fields: [xs, id]}", `p.yaml:1:23: cannot explode field "id": it is an integer, not an array`},
		{"config:\n  fields:\n    - yss", `p.yaml:3:7: cannot explode unknown field "yss" (did you mean "ys"?)`},
		{"config: {fields: [xs, xs]}", `p.yaml:1:23: field "xs" is listed twice`},
		{"config: {fields: []}", `p.yaml:1:18: fields must name at least one array field`},
	}
	for _, tt := range tests {
		if got := buildError(t, "Explode", tt.config, pairs); !strings.HasPrefix(got, tt.want) {
			t.Errorf("error\n got %s\nwant %s", got, tt.want)
		}
	}
}
