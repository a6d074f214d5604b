package mapping

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
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

// build builds transform typ from the pipeline text src, whose first transform's config is
// used, as the runner does: through the registry, with a Decoder that knows the file.
func build(t testing.TB, typ, src string, inputs ...*schemas.Schema) (component.Transform, *component.Context, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	d := &component.Decoder{File: "p.yaml", Lines: strings.Split(src, "\n"), Diags: &diag.List{}}
	root := doc.Content[0]
	ctx := &component.Context{Decoder: d, Type: typ, Name: "step", Pos: d.At(root),
		Config: component.MappingValue(root, "config")}
	for i, s := range inputs {
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: []string{"a", "b", "c"}[i], Schema: s})
	}
	spec, ok := component.Lookup(typ)
	if !ok {
		t.Fatalf("%s is not registered", typ)
	}
	impl := spec.Build(ctx)
	if impl == nil {
		return nil, ctx, d.Diags.Err()
	}
	return impl.(component.Transform), ctx, nil
}

func mustBuild(t testing.TB, typ, src string, inputs ...*schemas.Schema) (component.Transform, *component.Context) {
	t.Helper()
	tr, ctx, err := build(t, typ, src, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return tr, ctx
}

// buildError returns the first line of the build's error.
func buildError(t *testing.T, typ, src string, inputs ...*schemas.Schema) string {
	t.Helper()
	_, _, err := build(t, typ, src, inputs...)
	if err == nil {
		t.Fatalf("%s built without error", typ)
	}
	return err.Error()
}

// run processes the batches (on input 0) and returns what was emitted, by tag.
func run(t *testing.T, tr component.Transform, batches ...*schemas.Batch) (map[string][]*schemas.Batch, error) {
	t.Helper()
	out := map[string][]*schemas.Batch{}
	emit := func(tag string, b *schemas.Batch) error {
		if len(b.Pos) != len(b.Rows) || len(b.Time) != len(b.Rows) {
			t.Errorf("batch on %s: %d rows, %d positions, %d times", tag, len(b.Rows), len(b.Pos), len(b.Time))
		}
		out[tag] = append(out[tag], b)
		return nil
	}
	for _, b := range batches {
		if err := tr.Process(context.Background(), 0, b, emit); err != nil {
			return out, err
		}
	}
	return out, nil
}

// rows returns all rows emitted on tag.
func rows(out map[string][]*schemas.Batch, tag string) []schemas.Row {
	var all []schemas.Row
	for _, b := range out[tag] {
		all = append(all, b.Rows...)
	}
	return all
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
