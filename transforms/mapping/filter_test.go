package mapping

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name, config string
		ids          []int64
	}{
		{"expression", "config:\n  keep: price > 1", []int64{2, 3}},
		{"mapping form", "config:\n  keep: {expression: 'name != \"bread\"'}", []int64{1, 3}},
		{"python", "config:\n  language: python\n  keep: amount is not None and amount >= 0", []int64{1, 3}},
		{"all kept", "config: {keep: 'id > 0'}", []int64{1, 2, 3}},
		{"none kept", "config: {keep: 'id > 9'}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ctx := mustBuild(t, "Filter", tt.config, orders)
			if outputSchema(t, ctx, component.Main) != orders {
				t.Error("output schema is not the input schema")
			}
			out, err := run(t, tr, batch(orders, orderRows()...))
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range out.Rows(component.Main) {
				ids = append(ids, r[0].(int64))
			}
			if !reflect.DeepEqual(ids, tt.ids) {
				t.Errorf("kept %v, want %v", ids, tt.ids)
			}
		})
	}
}

var loose = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "flag", Type: typ(schemas.Any), Nullable: true},
)

// A non-boolean result is an error for the row: to error_handling, or the pipeline stops.
func TestFilterNonBoolean(t *testing.T) {
	in := batch(loose, schemas.Row{int64(1), true}, schemas.Row{int64(2), nil}, schemas.Row{int64(3), "yes"})
	tr, _ := mustBuild(t, "Filter", "config:\n  keep: flag\n  error_handling: {output: bad}", loose)
	out, err := run(t, tr, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Rows(component.Main); len(got) != 1 || got[0][0] != int64(1) {
		t.Errorf("kept %v", got)
	}
	bad := out.Rows("bad")
	if len(bad) != 2 || bad[0][1] != "Filter 'step': keep returned null, not a boolean" ||
		bad[1][1] != `Filter 'step': keep returned the string "yes", not a boolean` {
		t.Errorf("error rows %v", bad)
	}

	tr, _ = mustBuild(t, "Filter", "config:\n  keep: flag", loose)
	_, err = run(t, tr, in)
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 101 {
		t.Errorf("error %v", err)
	}
}

func TestFilterConfigErrors(t *testing.T) {
	tests := []struct{ config, want string }{
		{"config:\n  keep: price * 2", `p.yaml:2:9: keep must be a boolean expression, but "price * 2" is a number`},
		{"config:\n  keep: name", `p.yaml:2:9: keep must be a boolean expression, but "name" is a string`},
		{"config:\n  keep: nane == 'x'", `p.yaml:2:9: unknown field "nane" in the expression (did you mean "name"?)`},
		{"config:\n  keep: \"price >\n    'x'\"", `p.yaml:2:16: invalid operation: > (mismatched types number and string)`},
		{"config: {language: sql, keep: 'id > 1'}", `p.yaml:1:20: language "sql" is not supported`},
		{"config: {}", `p.yaml:1:9: Filter 'step' needs config key "keep"`},
	}
	for _, tt := range tests {
		if got := buildError(t, "Filter", tt.config, orders); !strings.HasPrefix(got, tt.want) {
			t.Errorf("error\n got %s\nwant %s", got, tt.want)
		}
	}
}
