package mapping

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func TestFlatten(t *testing.T) {
	a := schemas.New(
		schemas.Field{Name: "id", Type: typ(schemas.Int64)},
		schemas.Field{Name: "v", Type: typ(schemas.Int64)})
	b := schemas.New(
		schemas.Field{Name: "name", Type: typ(schemas.String)},
		schemas.Field{Name: "v", Type: typ(schemas.Float64)},
		schemas.Field{Name: "id", Type: typ(schemas.Int64)})
	tr, ctx := mustBuild(t, "Flatten", "type: Flatten", a, b, a)
	union := outputSchema(t, ctx, component.Main)
	if want := "{id integer?, v number?, name string?}"; union.String() != want {
		t.Errorf("schema %s, want %s", union, want)
	}
	var got []*schemas.Batch
	emit := func(tag string, bt *schemas.Batch) error {
		if bt.Schema != union || tag != component.Main {
			t.Errorf("emitted on %s with schema %v", tag, bt.Schema)
		}
		got = append(got, bt)
		return nil
	}
	ins := []*schemas.Batch{
		batch(a, schemas.Row{int64(1), int64(10)}),
		batch(b, schemas.Row{"x", 2.5, int64(2)}),
		batch(a, schemas.Row{int64(3), nil}),
	}
	for i, in := range ins {
		if err := tr.Process(context.Background(), i, in, emit); err != nil {
			t.Fatal(err)
		}
	}
	want := []schemas.Row{{int64(1), 10.0, nil}, {int64(2), 2.5, "x"}, {int64(3), nil, nil}}
	for i, bt := range got {
		if !reflect.DeepEqual(bt.Rows[0], want[i]) || bt.Pos[0] != ins[i].Pos[0] {
			t.Errorf("input %d: row %v at %v, want %v", i, bt.Rows[0], bt.Pos[0], want[i])
		}
	}
}

// Inputs of one schema are passed on without copying rows.
func TestFlattenSameSchema(t *testing.T) {
	tr, _ := mustBuild(t, "Flatten", "type: Flatten", orders, orders)
	in := batch(orders, orderRows()...)
	out, err := run(t, tr, in)
	if err != nil {
		t.Fatal(err)
	}
	if b := out[component.Main][0]; &b.Rows[0] != &in.Rows[0] {
		t.Error("rows were copied")
	}
}

func TestFlattenConflict(t *testing.T) {
	a := schemas.New(schemas.Field{Name: "id", Type: typ(schemas.Int64)})
	b := schemas.New(schemas.Field{Name: "id", Type: typ(schemas.String)})
	got := buildError(t, "Flatten", "type: Flatten", a, b)
	if want := `p.yaml:1:1: Flatten 'step' cannot merge field "id": it is an integer in input "a" but a string in input "b"`; !strings.HasPrefix(got, want) {
		t.Errorf("error\n got %s\nwant %s", got, want)
	}
}
