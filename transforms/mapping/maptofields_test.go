package mapping

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

func orderRows() []schemas.Row {
	return []schemas.Row{
		{int64(1), "apple", int64(3), 0.5, []any{"fruit", "red"}},
		{int64(2), "bread", nil, 2.25, nil},
		{int64(3), "cheese", int64(0), 7.0, []any{}},
	}
}

func TestMapToFields(t *testing.T) {
	tests := []struct {
		name   string
		config string
		schema string
		rows   []schemas.Row
	}{
		{"computed and renamed", `
config:
  fields:
    order_id: id
    label: upper(name)
    total: "price * 2"
    qty: amount`,
			"{order_id integer, label string, total number, qty integer?}",
			[]schemas.Row{{int64(1), "APPLE", 1.0, int64(3)}, {int64(2), "BREAD", 4.5, nil}, {int64(3), "CHEESE", 14.0, int64(0)}}},
		{"append replaces in place and drops", `
config:
  append: true
  drop: [tags, price]
  fields:
    name: name + "!"
    big: "(amount ?? 0) > 1"`,
			"{id integer, name string, amount integer?, big boolean}",
			[]schemas.Row{{int64(1), "apple!", int64(3), true}, {int64(2), "bread!", nil, false}, {int64(3), "cheese!", int64(0), false}}},
		{"append only drop", `
config: {append: true, drop: tags}`,
			"{id integer, name string, amount integer?, price number}",
			[]schemas.Row{{int64(1), "apple", int64(3), 0.5}, {int64(2), "bread", nil, 2.25}, {int64(3), "cheese", int64(0), 7.0}}},
		{"output_type and nullable results", `
config:
  fields:
    half: {expression: id / 2, output_type: number}
    tag: first(tags)
    n: "amount ?? -1"`,
			"{half number, tag string?, n integer}",
			[]schemas.Row{{0.5, "fruit", int64(3)}, {1.0, nil, int64(-1)}, {1.5, nil, int64(0)}}},
		{"python", `
config:
  language: python
  fields:
    missing: amount is None
    flag: "True if id > 1 else False"`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ctx, err := build(t, "MapToFields", tt.config, orders)
			if tt.rows == nil {
				if err == nil || !strings.Contains(err.Error(), "conditional expressions") {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := outputSchema(t, ctx, component.Main).String(); got != tt.schema {
				t.Errorf("schema %s, want %s", got, tt.schema)
			}
			out, err := run(t, tr, batch(orders, orderRows()...))
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Rows(component.Main); !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows\n got %v\nwant %v", got, tt.rows)
			}
		})
	}
}

// A failing expression sends the record to error_handling in Beam's shape, with where it came
// from; the other records go on.
func TestMapToFieldsErrorHandling(t *testing.T) {
	tr, ctx := mustBuild(t, "MapToFields", `
config:
  fields:
    id: id
    per_item: price / amount
  error_handling:
    output: errors`, orders)
	want := "{element struct<id integer, name string, amount integer, price number, tags array<string>>?, msg string, stack string, source struct<topic string, partition integer, offset integer>?}"
	if got := outputSchema(t, ctx, "errors").String(); got != want {
		t.Errorf("error schema\n got %s\nwant %s", got, want)
	}
	out, err := run(t, tr, batch(orders, orderRows()...))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Rows(component.Main); !reflect.DeepEqual(got, []schemas.Row{{int64(1), 0.5 / 3}}) {
		t.Errorf("good rows %v", got)
	}
	errs := out["errors"]
	if len(errs) != 1 || len(errs[0].Rows) != 2 {
		t.Fatalf("error batches %v", errs)
	}
	e := errs[0].Rows[1]
	wantElem := map[string]any{"id": int64(3), "name": "cheese", "amount": int64(0), "price": 7.0, "tags": []any{}}
	if !reflect.DeepEqual(e[0], wantElem) {
		t.Errorf("element %v", e[0])
	}
	if e[1] != `MapToFields 'step' field "per_item": p.yaml:5:21: division by zero` {
		t.Errorf("msg %q", e[1])
	}
	if e[2] != "" {
		t.Errorf("stack %q", e[2])
	}
	if src := e[3].(map[string]any); src["topic"] != "kafka:orders" || src["partition"] != int64(3) || src["offset"] != int64(102) {
		t.Errorf("source %v", e[3])
	}
	if m := errs[0].Rows[0][1]; m != `MapToFields 'step' field "per_item": p.yaml:5:21: invalid operation: number / null` {
		t.Errorf("msg for null %q", m)
	}
	if errs[0].Pos[1].Offset != 102 || !errs[0].Time[1].Equal(t0.Add(2e9)) {
		t.Errorf("error row position %v %v", errs[0].Pos[1], errs[0].Time[1])
	}
}

// Without error_handling the pipeline stops at the failing record.
func TestMapToFieldsStops(t *testing.T) {
	tr, _ := mustBuild(t, "MapToFields", "config:\n  fields:\n    x: 100 / (id - 2)", orders)
	out, err := run(t, tr, batch(orders, orderRows()...))
	var re *component.RowError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a RowError", err, err)
	}
	if re.Pos.Offset != 101 || re.Pos.Source != "kafka:orders" || !errors.Is(err, expr.ErrDivisionByZero) {
		t.Errorf("row error %v", re)
	}
	if want := `record at kafka:orders partition 3 offset 101: MapToFields 'step' field "x": p.yaml:3:12: division by zero`; err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	if len(out) != 0 {
		t.Errorf("emitted %v before stopping", out)
	}
}

func TestMapToFieldsConfigErrors(t *testing.T) {
	tests := []struct{ name, config, want string }{
		{"unknown field", "config:\n  fields:\n    total: amout * 2",
			`p.yaml:3:12: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"block scalar", "config:\n  fields:\n    total: |\n      price *\n        amout",
			`p.yaml:5:9: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"type error", "config:\n  fields:\n    total: 'name * 2'",
			`p.yaml:3:18: invalid operation: * (mismatched types string and integer)`},
		{"drop unknown", "config:\n  append: true\n  drop: [id, prise]",
			`p.yaml:3:14: cannot drop unknown field "prise" (did you mean "price"?)`},
		{"drop without append", "config:\n  fields: {a: id}\n  drop: [id]",
			`p.yaml:3:9: drop needs append: true (without append only the listed fields are kept)`},
		{"dropped and defined", "config:\n  append: true\n  drop: [id]\n  fields: {id: id + 1}",
			`p.yaml:3:10: field "id" is both dropped and defined in fields`},
		{"no fields", "config: {language: python}",
			`p.yaml:1:9: MapToFields 'step' needs config key "fields" (or append: true)`},
		{"language", "config:\n  language: javascript\n  fields: {a: id}",
			`p.yaml:2:13: language "javascript" is not supported`},
		{"unknown key in mapping form", "config:\n  fields:\n    a: {expression: id, callabel: 'lambda x: x'}",
			`p.yaml:3:25: unknown key "callabel" in MapToFields 'step'`},
		{"expression and callable", "config:\n  fields:\n    a: {expression: id, callable: 'lambda x: x'}",
			`p.yaml:3:8: MapToFields 'step' takes one of expression, callable and path, not callable and expression`},
		{"callable without python", "config:\n  language: generic\n  fields:\n    a: {callable: 'lambda x: x'}",
			`p.yaml:4:20: callable needs language: python`},
		{"fields not a mapping", "config:\n  fields: [a]",
			`p.yaml:2:11: "fields" must be a mapping of field names to expressions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildError(t, "MapToFields", tt.config, orders); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Lanes call Process concurrently on one transform.
func TestMapToFieldsConcurrentLanes(t *testing.T) {
	tr, _ := mustBuild(t, "MapToFields", "config:\n  fields:\n    label: name + '-' + string(id)\n    q: amount ?? 0", orders)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				out, err := run(t, tr, batch(orders, orderRows()...))
				if err != nil {
					t.Error(err)
					return
				}
				if r := out.Rows(component.Main); len(r) != 3 || r[2][0] != "cheese-3" || r[1][1] != int64(0) {
					t.Errorf("rows %v", r)
					return
				}
			}
		})
	}
	wg.Wait()
}
