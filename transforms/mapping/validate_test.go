package mapping

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

const validateConfig = `config:
  schema:
    type: object
    properties:
      name: {type: string, minLength: 4}
      amount: {type: [integer, "null"], minimum: 0}
    required: [name]
`

// Rows that satisfy the schema pass; the others go to the error output with where they break
// it, or stop the pipeline at their position.
func TestValidateWithSchema(t *testing.T) {
	in := batch(orders,
		schemas.Row{int64(1), "apple", int64(3), 0.5, nil},
		schemas.Row{int64(2), "fig", int64(1), 2.0, nil},
		schemas.Row{int64(3), "bread", int64(-2), 1.0, nil},
		schemas.Row{int64(4), "honey", nil, 9.0, nil})
	tr, ctx := mustBuild(t, "ValidateWithSchema", validateConfig+"  error_handling: {output: invalid}", orders)
	if outputSchema(t, ctx, component.Main) != orders {
		t.Error("the output schema is not the input's")
	}
	out, err := run(t, tr, in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range out.Rows(component.Main) {
		ids = append(ids, r[0].(int64))
	}
	if !reflect.DeepEqual(ids, []int64{1, 4}) {
		t.Errorf("passed %v, want [1 4]", ids)
	}
	bad := out.Rows("invalid")
	if len(bad) != 2 || !strings.Contains(bad[0][1].(string), "at /name: minLength: got 3, want 4") ||
		!strings.Contains(bad[1][1].(string), "at /amount: minimum: got -2, want 0") {
		t.Errorf("error rows %v", bad)
	}

	tr, _ = mustBuild(t, "ValidateWithSchema", validateConfig, orders)
	_, err = run(t, tr, in)
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 101 {
		t.Errorf("without error_handling: %v, want the pipeline stopped at offset 101", err)
	}
}

func TestValidateWithSchemaConfigErrors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"config:\n  schema: {type: objekt}", "p.yaml:2:11: schema is not a valid JSON Schema: at /type: value must be one of"},
		{"config:\n  schema: '{\"type\": '", "p.yaml:2:11: schema is not valid JSON"},
		{"config: {}", `needs config key "schema"`},
	} {
		if got := buildError(t, "ValidateWithSchema", tt.config, orders); !strings.Contains(got, tt.want) {
			t.Errorf("error\n got %s\nwant %s", got, tt.want)
		}
	}
}
