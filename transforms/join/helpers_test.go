package join_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	_ "github.com/sluicehq/sluice/transforms/join"
	"github.com/sluicehq/sluice/transforms/window"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

func field(name string, k schemas.Kind) schemas.Field {
	return schemas.Field{Name: name, Type: typ(k)}
}

// in is one input of a Join under test.
type in struct {
	name      string
	schema    *schemas.Schema
	unbounded bool
}

// build builds the Join a snippet describes (its config and windowing keys) over inputs
// named as a mapping, as the runner does. It returns the transform (nil with errors), the
// output schema and the problems, one per line.
func build(t *testing.T, src string, inputs ...in) (component.Stateful, *schemas.Schema, string) {
	t.Helper()
	d, root := componenttest.Env{}.Parse(t, src)
	ctx := &component.Context{Decoder: d, Type: "Join", Name: "Join", Pos: d.At(root),
		Config: component.MappingValue(root, "config")}
	if w := component.MappingValue(root, "windowing"); w != nil {
		spec := window.Decode(d, w)
		if spec == nil {
			t.Fatalf("bad windowing: %v", d.Diags.Err())
		}
		ctx.Windowing = spec
	}
	for _, i := range inputs {
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: i.name, Schema: i.schema, Named: true, Unbounded: i.unbounded})
	}
	spec, _ := component.Lookup("Join")
	impl := spec.Build(ctx)
	var problems []string
	if err := d.Diags.Err(); err != nil {
		problems = append(problems, err.Error())
	}
	var out *schemas.Schema
	if len(ctx.Outputs()) > 0 {
		out = ctx.Outputs()[0].Schema
	}
	if impl == nil {
		return nil, out, strings.Join(problems, "\n")
	}
	return impl.(component.Stateful), out, strings.Join(problems, "\n")
}

func mustBuild(t *testing.T, src string, inputs ...in) (component.Stateful, *schemas.Schema) {
	t.Helper()
	j, out, problems := build(t, src, inputs...)
	if j == nil {
		t.Fatalf("build failed:\n%s", problems)
	}
	return j, out
}

// rec is a record of an input at an event time in seconds.
type rec struct {
	at  int64
	row schemas.Row
}

// feed hands the records to input number input of j as one batch from partition 0 of
// source src, positioned by their order.
func feed(t *testing.T, j component.Stateful, input int, src string, recs ...rec) {
	t.Helper()
	b := &schemas.Batch{}
	for i, r := range recs {
		b.Rows = append(b.Rows, r.row)
		b.Time = append(b.Time, time.Unix(r.at, 0).UTC())
		b.Pos = append(b.Pos, schemas.Position{Source: src, Offset: int64(i)})
	}
	if err := j.Process(context.Background(), input, b, noErrors(t)); err != nil {
		t.Fatal(err)
	}
}

func noErrors(t *testing.T) component.Emit {
	return func(tag string, b *schemas.Batch) error {
		t.Errorf("unexpected %d rows on %s", len(b.Rows), tag)
		return nil
	}
}

// fire fires j (every window when final) and returns the joined rows, each as
// "window: row" with the row's values printed in order, sorted.
func fire(t *testing.T, j component.Stateful, final bool, upstream ...string) []string {
	t.Helper()
	up := schemas.Offsets{}
	for _, s := range upstream {
		up.Set(s, 0, 0)
	}
	var got []string
	err := j.Fire(context.Background(), up, final, func(tag string, b *schemas.Batch) error {
		if tag != component.Main {
			t.Errorf("fired on %s", tag)
		}
		for i, r := range b.Rows {
			w := window.Window{Start: b.Windows[i][0], End: b.Windows[i][1]}
			got = append(got, fmt.Sprintf("%s: %v", w, showRow(r)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// showRow prints a row's values, null as "-".
func showRow(r schemas.Row) string {
	parts := make([]string, len(r))
	for i, v := range r {
		if v == nil {
			parts[i] = "-"
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, " ")
}

// showSchema prints a schema's fields as "name" or "name?" when nullable.
func showSchema(s *schemas.Schema) string {
	var parts []string
	for _, f := range s.Fields {
		n := f.Name
		if f.Nullable {
			n += "?"
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, " ")
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}
