package sql

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

var (
	orders = schemaOf(`{type: object, required: [id, customer, amount, qty], properties: {
  id: {type: integer}, customer: {type: integer}, amount: {type: number}, qty: {type: integer}}}`)
	customers = schemaOf(`{type: object, required: [id, name], properties: {id: {type: integer}, name: {type: string}}}`)
)

// buildOver builds the Sql transform of src over named inputs, as the runner builds one
// with `input: {name: ..., ...}`; unbounded inputs read a stream.
func buildOver(t *testing.T, src string, unbounded bool, names []string, ins ...*schemas.Schema) (component.Transform, *component.Context, error) {
	t.Helper()
	d, root := componenttest.Env{File: "p.yaml"}.Parse(t, src)
	ctx := &component.Context{Decoder: d, Type: "Sql", Name: "Sql", Pos: d.At(root), Config: component.MappingValue(root, "config")}
	if w := component.MappingValue(root, "windowing"); w != nil {
		ctx.Windowing = window.Decode(d, w)
	}
	for i, s := range ins {
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: names[i], Schema: s, Named: true, Unbounded: unbounded})
	}
	spec, _ := component.Lookup("Sql")
	impl := spec.Build(ctx)
	if err := d.Diags.Err(); err != nil {
		return nil, ctx, err
	}
	return impl.(component.Transform), ctx, nil
}

func rowsOf(s *schemas.Schema, rows ...schemas.Row) *schemas.Batch {
	b := batch(rows...)
	b.Schema = s
	return b
}

const joinQuery = `
type: Sql
config:
  query: |
    SELECT o.id, c.name, o.amount / o.qty AS unit
    FROM orders o LEFT JOIN customers c ON o.customer = c.id
  error_handling: {output: failed}
`

// TestJoinReadsInputsByName: the inputs are joined in FROM's order whatever the order of
// input:, and the joined state survives a snapshot and restore into a new instance.
func TestJoinReadsInputsByName(t *testing.T) {
	ctx := context.Background()
	names := []string{"customers", "orders"} // input 0 is customers, FROM starts with orders
	first, _, err := buildOver(t, joinQuery, false, names, customers, orders)
	if err != nil {
		t.Fatal(err)
	}
	out := componenttest.Emitted{}
	if err := first.Process(ctx, 0, rowsOf(customers, schemas.Row{int64(10), "ann"}), out.Emit); err != nil {
		t.Fatal(err)
	}
	snap, err := first.(component.Stateful).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second, _, _ := buildOver(t, joinQuery, false, names, customers, orders)
	st := second.(component.Stateful)
	if err := st.Restore(snap); err != nil {
		t.Fatal(err)
	}
	in := rowsOf(orders, schemas.Row{int64(1), int64(10), 9.0, int64(3)}, schemas.Row{int64(2), int64(11), 4.0, int64(2)},
		schemas.Row{int64(3), int64(10), 1.0, int64(0)})
	if err := st.Process(ctx, 1, in, out.Emit); err != nil {
		t.Fatal(err)
	}
	if err := st.Fire(ctx, nil, true, out.Emit); err != nil {
		t.Fatal(err)
	}
	want := []schemas.Row{{int64(1), "ann", 3.0}, {int64(2), nil, 2.0}}
	if got := out.Rows(component.Main); !reflect.DeepEqual(got, want) {
		t.Errorf("joined %v, want %v", got, want)
	}
	// Order 3's quantity is 0: its row goes to the error output, with the place in the query.
	failed := out.Rows("failed")
	if len(failed) != 1 || !strings.Contains(failed[0][1].(string), "p.yaml:5:26: division by zero") {
		t.Errorf("error output %v, want the division by zero of order 3", failed)
	}
}

// TestJoinOfStreamNeedsWindow: as the Join transform, a join over a stream in the global
// window would never fire and is refused; with a window it builds.
func TestJoinOfStreamNeedsWindow(t *testing.T) {
	names := []string{"orders", "customers"}
	_, _, err := buildOver(t, joinQuery, true, names, orders, customers)
	if err == nil || !strings.Contains(err.Error(), "in the global window, which closes only at the end of input") {
		t.Errorf("error %v, want the global window refused", err)
	}
	if _, _, err := buildOver(t, joinQuery+"windowing: {type: fixed, size: 1m}\n", true, names, orders, customers); err != nil {
		t.Errorf("with a window: %v", err)
	}
}

func TestJoinErrors(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT * FROM orders JOIN customers":                                                                                                                    "a JOIN without ON (a cross join) is not supported",
		"SELECT * FROM orders, customers WHERE orders.customer = customers.id":                                                                                   "a JOIN without ON (a cross join) is not supported",
		"SELECT * FROM orders NATURAL JOIN customers":                                                                                                            "NATURAL JOIN is not supported",
		"SELECT * FROM orders JOIN customers ON orders.customer < customers.id":                                                                                  "this JOIN condition is not supported",
		"SELECT * FROM orders JOIN customers ON orders.id = orders.customer":                                                                                     "must compare a column of customers with one of the tables before it",
		"SELECT * FROM orders JOIN customers ON orders.customer = customers.name":                                                                                "cannot join on",
		"SELECT * FROM orders JOIN customers ON orders.custmer = customers.id":                                                                                   `unknown column "orders.custmer" (did you mean "orders.customer"?)`,
		"SELECT x.* FROM orders JOIN customers ON orders.customer = customers.id":                                                                                `unknown table "x" in x.*`,
		"SELECT DISTINCT name FROM orders JOIN customers USING (id)":                                                                                             "",
		"SELECT name, COUNT(*) AS n FROM orders JOIN customers USING (id) GROUP BY name, HOP(CAST(name AS TIMESTAMP), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)": "GROUP BY HOP over a JOIN is not supported",
		"SELECT DISTINCT * FROM orders JOIN customers USING (id)":                                                                                                "",
		"SELECT * FROM orders STRAIGHT_JOIN customers ON orders.customer = customers.id":                                                                         "SQL syntax error",
		"SELECT * FROM orders FULL customers":                                                                                                                    "SQL syntax error",
		"SELECT customers.* FROM orders JOIN customers USING (id) WHERE qty > 1":                                                                                 "",
		"SELECT name FROM orders o FULL OUTER JOIN customers c ON o.customer = c.id":                                                                             "",
	} {
		_, _, err := buildOver(t, "config:\n  query: \""+q+"\"\n", false, []string{"orders", "customers"}, orders, customers)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: error %v, want %q", q, err, want)
		}
	}
}

// TestJoinGroupedPerWindow: GROUP BY over a JOIN groups the joined rows of each window when
// the window is joined: one row per key and window, with the window's bounds and position.
func TestJoinGroupedPerWindow(t *testing.T) {
	src := `
type: Sql
windowing: {type: fixed, size: 1m}
config:
  query: |
    SELECT c.name, SUM(o.amount) AS total, COUNT(*) AS n
    FROM orders o JOIN customers c ON o.customer = c.id
    GROUP BY c.name
`
	tr, _, err := buildOver(t, src, true, []string{"orders", "customers"}, orders, customers)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(b *schemas.Batch, secs ...int) *schemas.Batch {
		for i, s := range secs {
			b.Time[i] = gameTime.Add(time.Duration(s) * time.Second)
		}
		return b
	}
	out := componenttest.Emitted{}
	custs := at(rowsOf(customers, schemas.Row{int64(10), "ann"}, schemas.Row{int64(10), "ann"}), 5, 65)
	ords := at(rowsOf(orders, schemas.Row{int64(1), int64(10), 2.0, int64(1)}, schemas.Row{int64(2), int64(10), 3.0, int64(1)},
		schemas.Row{int64(3), int64(10), 7.0, int64(1)}), 10, 20, 70)
	if err := tr.Process(ctx, 1, custs, out.Emit); err != nil {
		t.Fatal(err)
	}
	if err := tr.Process(ctx, 0, ords, out.Emit); err != nil {
		t.Fatal(err)
	}
	if err := tr.(component.Stateful).Fire(ctx, nil, true, out.Emit); err != nil {
		t.Fatal(err)
	}
	want := []schemas.Row{{"ann", 5.0, int64(2)}, {"ann", 7.0, int64(1)}}
	if got := out.Rows(component.Main); !reflect.DeepEqual(got, want) {
		t.Fatalf("grouped %v, want %v (one row per window)", got, want)
	}
	b := out[component.Main][0]
	if len(b.Windows) != 2 || b.Windows[1][0]-b.Windows[0][0] != int64(time.Minute) {
		t.Errorf("windows %v, want two minutes one after the other", b.Windows)
	}
	if b.Pos[0].Source != "window:Sql" || b.Pos[1].Offset != b.Windows[1][1]/int64(time.Millisecond) {
		t.Errorf("positions %v, want the join's: its window's end in ms", b.Pos)
	}
}
