package create

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// env names the Create the tests build "orders".
var env = componenttest.Env{Name: "orders"}

func buildYAML(t *testing.T, src string) (*Source, *component.Context, error) {
	t.Helper()
	b := env.Build(t, "Create", src)
	if b.Spec.Kind != component.KindSource {
		t.Fatal("Create is not a registered source")
	}
	if b.Component == nil {
		return nil, b.Context, b.Err()
	}
	return b.Component.(*Source), b.Context, nil
}

// readAll reads to the end, decoding every batch, and returns the rows emitted.
func readAll(t *testing.T, s *Source) ([]schemas.Row, []*schemas.Batch) {
	t.Helper()
	out := componenttest.Emitted{}
	if err := componenttest.ReadAll(context.Background(), s, out.Emit); err != nil {
		t.Fatal(err)
	}
	for tag := range out {
		if tag != component.Main {
			t.Errorf("emitted on %q", tag)
		}
	}
	return out.Rows(component.Main), out[component.Main]
}

func TestCreate(t *testing.T) {
	s, ctx, err := buildYAML(t, `
config:
  reshuffle: false
  elements:
    - {id: 1, name: apple, price: 0.5, tags: [a, b]}
    - {id: 2, name: bread, price: 2, ts: 2024-05-01T10:00:00Z}
    - {id: 3, user: {first: Ada}}`)
	if err != nil {
		t.Fatal(err)
	}
	out := ctx.Outputs()
	want := "{id integer, name string?, price number?, tags array<string>?, ts timestamp?, user struct<first string>?}"
	if len(out) != 1 || out[0].Tag != component.Main || out[0].Schema.String() != want {
		t.Fatalf("outputs %v, want %s", out, want)
	}
	if err := s.Open(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	rows, batches := readAll(t, s)
	ts := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	wantRows := []schemas.Row{
		{int64(1), "apple", 0.5, []any{"a", "b"}, nil, nil},
		{int64(2), "bread", 2.0, nil, ts, nil},
		{int64(3), nil, nil, nil, nil, map[string]any{"first": "Ada"}},
	}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("rows\n got %v\nwant %v", rows, wantRows)
	}
	b := batches[0]
	if b.Schema != out[0].Schema || b.Pos[2] != (schemas.Position{Source: "create:orders", Offset: 2}) || !b.Time[0].Equal(EventTime) {
		t.Errorf("batch schema %v positions %v times %v", b.Schema, b.Pos, b.Time)
	}
	if next, _ := s.Offsets().Get("create:orders", 0); next != 3 {
		t.Errorf("next offset %d", next)
	}
}

func TestCreatePlainValues(t *testing.T) {
	s, ctx, err := buildYAML(t, "config:\n  elements: [1, 2, 3]")
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.Outputs()[0].Schema.String(); got != "{element integer}" {
		t.Errorf("schema %s", got)
	}
	_ = s.Open(context.Background(), nil)
	if rows, _ := readAll(t, s); !reflect.DeepEqual(rows, []schemas.Row{{int64(1)}, {int64(2)}, {int64(3)}}) {
		t.Errorf("rows %v", rows)
	}
}

// Reads come in batches of BatchSize and resume after the offset a checkpoint recorded.
func TestCreateBatchesAndResume(t *testing.T) {
	var src strings.Builder
	src.WriteString("config:\n  elements:\n")
	for i := range 2500 {
		src.WriteString("    - {n: " + strconv.Itoa(i) + "}\n")
	}
	s, _, err := buildYAML(t, src.String())
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Open(context.Background(), nil)
	rows, batches := readAll(t, s)
	if len(rows) != 2500 || len(batches) != 3 || len(batches[0].Rows) != BatchSize || len(batches[2].Rows) != 500 {
		t.Fatalf("%d rows in %d batches", len(rows), len(batches))
	}
	from := schemas.Offsets{}
	from.Set("create:orders", 0, 1999)
	_ = s.Open(context.Background(), from)
	rows, batches = readAll(t, s)
	if len(rows) != 501 || rows[0][0] != int64(1999) || batches[0].Pos[0].Offset != 1999 {
		t.Errorf("resumed at %v, %d rows", rows[0], len(rows))
	}
	from.Set("create:orders", 0, 2500)
	_ = s.Open(context.Background(), from)
	if _, err := s.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("read after the end: %v", err)
	}
}

func TestCreateErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"config:\n  elements: {a: 1}", "p.yaml:2:13: elements must be a list"},
		{"config:\n  elements:\n    - {a: 1}\n    - 2", "p.yaml:4:7: elements must be all mappings or all plain values: this one is not a mapping"},
		{"config: {}", `p.yaml:1:9: Create 'orders' needs config key "elements"`},
	}
	for _, tt := range tests {
		_, _, err := buildYAML(t, tt.src)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error\n got %v\nwant %s", err, tt.want)
		}
	}
}

const outputSchema = `
  output_schema:
    type: object
    properties:
      sdk: {type: string}
      year: {type: integer}
    required: [sdk]`

// output_schema gives the output its schema (year an integer though no element has a
// fraction or null); an element that does not fit it is a validation error at the element.
func TestCreateOutputSchema(t *testing.T) {
	s, ctx, err := buildYAML(t, "config:\n  elements:\n    - {sdk: MapReduce, year: 2004}\n    - {sdk: Flume}"+outputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.Outputs()[0].Schema.String(); got != "{sdk string, year integer?}" {
		t.Errorf("schema %s", got)
	}
	rows, _ := readAll(t, s)
	if !reflect.DeepEqual(rows, []schemas.Row{{"MapReduce", int64(2004)}, {"Flume", nil}}) {
		t.Errorf("rows %v", rows)
	}
	_, _, err = buildYAML(t, "config:\n  elements:\n    - {sdk: MapReduce, year: apple}\n    - {year: 2008}\n    - {sdk: x, month: 3}"+outputSchema)
	for _, want := range []string{
		`p.yaml:3:7: element 1 does not fit output_schema: field "year": want an integer, got string "apple"`,
		`p.yaml:4:7: element 2 does not fit output_schema: field "sdk": want a string, got null`,
		`p.yaml:5:7: element 3 does not fit output_schema: field "month" is not in it`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error\n got %v\nwant %s", err, want)
		}
	}
}

// With error_handling inside output_schema (Beam's place for it), the elements that do not
// fit go to that output, as written, in Beam's {element, msg, stack} shape.
func TestCreateOutputSchemaErrorHandling(t *testing.T) {
	s, ctx, err := buildYAML(t, "config:\n  elements:\n    - {sdk: MapReduce, year: 2004}\n    - {sdk: CheeseWheel, year: apple}"+
		outputSchema+"\n    error_handling: {output: invalid}")
	if err != nil {
		t.Fatal(err)
	}
	if outs := ctx.Outputs(); len(outs) != 2 || outs[0].Tag != "invalid" || !outs[0].Errors || outs[1].Tag != component.Main {
		t.Fatalf("outputs %v, want main and the error output invalid", outs)
	}
	out := componenttest.Emitted{}
	if err := componenttest.ReadAll(context.Background(), s, out.Emit); err != nil {
		t.Fatal(err)
	}
	if rows := out.Rows(component.Main); !reflect.DeepEqual(rows, []schemas.Row{{"MapReduce", int64(2004)}}) {
		t.Errorf("rows %v", rows)
	}
	bad := out.Rows("invalid")
	if len(bad) != 1 || !reflect.DeepEqual(bad[0][0], map[string]any{"sdk": "CheeseWheel", "year": "apple"}) ||
		!strings.Contains(bad[0][1].(string), `element 2 does not fit output_schema: field "year"`) {
		t.Errorf("error rows %v", bad)
	}
	if b := out["invalid"][0]; b.Pos[0].Offset != 1 {
		t.Errorf("error row at %v, want the element's offset 1", b.Pos[0])
	}
}
