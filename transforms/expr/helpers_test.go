package expr

import (
	"math/big"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

// testSchema has a field of every kind.
var testSchema = schemas.New(
	schemas.Field{Name: "amount", Type: typ(schemas.Int64)},
	schemas.Field{Name: "count", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "name", Type: typ(schemas.String)},
	schemas.Field{Name: "ratio", Type: typ(schemas.Float64)},
	schemas.Field{Name: "ok", Type: typ(schemas.Bool)},
	schemas.Field{Name: "price", Type: schemas.Type{Kind: schemas.Decimal, Precision: 10, Scale: 2}},
	schemas.Field{Name: "payload", Type: typ(schemas.Bytes)},
	schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "user", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
		{Name: "id", Type: typ(schemas.Int64)},
		{Name: "address", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
			{Name: "zip", Type: typ(schemas.String)},
		}}},
	}}},
	schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}},
	schemas.Field{Name: "attrs", Type: schemas.Type{Kind: schemas.Map, Elem: &schemas.Type{Kind: schemas.String}}},
	schemas.Field{Name: "extra", Type: typ(schemas.Any), Nullable: true},
	schemas.Field{Name: "user-id", Type: typ(schemas.String)},
	schemas.Field{Name: "nick", Type: typ(schemas.String), Nullable: true},
)

func testRow() schemas.Row {
	return schemas.Row{
		int64(7), nil, "widget", 0.5, true, big.NewRat(1999, 100), []byte("raw"), mustTime("2024-05-01T10:00:00Z"),
		map[string]any{"id": int64(42), "address": map[string]any{"zip": "10115"}},
		[]any{"a", "b"}, map[string]any{"k": "v"}, nil, "u-1", nil,
	}
}

// compileYAML decodes the expression at key of the YAML document src, as the transforms do,
// and compiles it against testSchema.
func compileYAML(t *testing.T, src, key, lang string) (*Program, error) {
	t.Helper()
	d, root := componenttest.Env{}.Parse(t, src)
	n := component.MappingValue(root, key)
	if n == nil {
		t.Fatalf("no key %q", key)
	}
	spec, ok := DecodeSpec(d, n, "Test")
	if !ok {
		return nil, d.Diags.Err()
	}
	return spec.Compile(testSchema, Options{Language: lang, Lines: d.Lines})
}

// eval compiles expression text and runs it on row.
func eval(t *testing.T, text, lang string, row schemas.Row) (any, *Program, error) {
	t.Helper()
	p, err := Compile(component.Expr{Text: text, Pos: diag.Pos{File: "p.yaml", Line: 1, Col: 7}}, testSchema, Options{Language: lang})
	if err != nil {
		return nil, nil, err
	}
	ev := NewEvaluator(testSchema, p)
	s := ev.Scope()
	defer s.Release()
	s.Bind(row)
	v, err := s.Eval(0)
	return v, p, err
}

func mustTime(s string) time.Time {
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return ts
}
