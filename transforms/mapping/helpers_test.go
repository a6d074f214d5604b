package mapping

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

var strArray = schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}

// orders is the input schema of most tests.
var orders = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "name", Type: typ(schemas.String)},
	schemas.Field{Name: "amount", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "price", Type: typ(schemas.Float64)},
	schemas.Field{Name: "tags", Type: strArray, Nullable: true},
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// batch makes a batch of rows of s with positions kafka:orders partition 3, offsets 100...
func batch(s *schemas.Schema, rows ...schemas.Row) *schemas.Batch {
	b := &schemas.Batch{Schema: s, Rows: rows}
	for i := range rows {
		b.Pos = append(b.Pos, schemas.Position{Source: "kafka:orders", Partition: 3, Offset: int64(100 + i)})
		b.Time = append(b.Time, t0.Add(time.Duration(i)*time.Second))
	}
	return b
}

// env places the transforms the tests build: named "step", with inputs "a", "b" and "c".
var env = componenttest.Env{Name: "step", Inputs: []string{"a", "b", "c"}}

// build builds transform typ from the pipeline text src, whose config key is used, as the
// runner does: through the registry, with a Decoder that knows the file.
func build(t testing.TB, typ, src string, inputs ...*schemas.Schema) (component.Transform, *component.Context, error) {
	t.Helper()
	b := env.Build(t, typ, src, inputs...)
	if b.Component == nil {
		return nil, b.Context, b.Err()
	}
	return b.Component.(component.Transform), b.Context, nil
}

func mustBuild(t testing.TB, typ, src string, inputs ...*schemas.Schema) (component.Transform, *component.Context) {
	t.Helper()
	tr, ctx, err := build(t, typ, src, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return tr, ctx
}

// buildError returns the build's error.
func buildError(t *testing.T, typ, src string, inputs ...*schemas.Schema) string {
	t.Helper()
	_, _, err := build(t, typ, src, inputs...)
	if err == nil {
		t.Fatalf("%s built without error", typ)
	}
	return err.Error()
}

// run processes the batches (on input 0) and returns what was emitted, by tag.
func run(t *testing.T, tr component.Transform, batches ...*schemas.Batch) (componenttest.Emitted, error) {
	t.Helper()
	out := componenttest.Emitted{}
	emit := func(tag string, b *schemas.Batch) error {
		if len(b.Pos) != len(b.Rows) || len(b.Time) != len(b.Rows) {
			t.Errorf("batch on %s: %d rows, %d positions, %d times", tag, len(b.Rows), len(b.Pos), len(b.Time))
		}
		return out.Emit(tag, b)
	}
	for _, b := range batches {
		if err := tr.Process(context.Background(), 0, b, emit); err != nil {
			return out, err
		}
	}
	return out, nil
}

// outputSchema returns the schema the transform declared for tag.
func outputSchema(t *testing.T, ctx *component.Context, tag string) *schemas.Schema {
	t.Helper()
	for _, o := range ctx.Outputs() {
		if o.Tag == tag {
			return o.Schema
		}
	}
	t.Fatalf("no output %q", tag)
	return nil
}
