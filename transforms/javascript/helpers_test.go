package javascript

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

var gameSchema = schemas.New(
	schemas.Field{Name: "user", Type: typ(schemas.String)},
	schemas.Field{Name: "team", Type: typ(schemas.String)},
	schemas.Field{Name: "score", Type: typ(schemas.Int64)},
	schemas.Field{Name: "ratio", Type: typ(schemas.Float64), Nullable: true},
	schemas.Field{Name: "nick", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}},
	schemas.Field{Name: "loc", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
		{Name: "city", Type: typ(schemas.String)}, {Name: "zip", Type: typ(schemas.Int64)}}}},
	schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
)

var gameTime = time.Date(2024, 5, 1, 10, 30, 0, 0, time.UTC)

func gameRow() schemas.Row {
	return schemas.Row{"alice", "red", int64(12), nil, nil, []any{"a", "b"},
		map[string]any{"city": "Paris", "zip": int64(75001)}, gameTime}
}

// run compiles src (kind) with language javascript and evaluates it on gameRow.
func run(t *testing.T, kind expr.SourceKind, text string) (any, *expr.Program, error) {
	t.Helper()
	return runOpts(t, expr.Spec{Expr: component.Expr{Text: text, Pos: diag.Pos{File: "p.yaml", Line: 3, Col: 7}}, Kind: kind},
		expr.Options{Language: "javascript"})
}

func runOpts(t *testing.T, spec expr.Spec, o expr.Options) (any, *expr.Program, error) {
	t.Helper()
	p, err := spec.Compile(gameSchema, o)
	if err != nil {
		return nil, nil, err
	}
	ev := expr.NewEvaluator(gameSchema, p)
	s := ev.Scope()
	defer s.Release()
	s.Bind(gameRow())
	v, err := s.Eval(0)
	return v, p, err
}

// valueCase is code with the value and the type it gives on gameRow.
type valueCase struct {
	text string
	want any
	kind schemas.Kind
}

func checkValues(t *testing.T, kind expr.SourceKind, cases []valueCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.text, func(t *testing.T) {
			v, p, err := run(t, kind, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
			if got := p.Type().Kind; got != tt.kind {
				t.Errorf("type %v, want %v", got, tt.kind)
			}
		})
	}
}

// errorCase is code of a kind whose compile or run error contains want.
type errorCase struct {
	kind expr.SourceKind
	text string
	want string
}

func checkErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := run(t, tt.kind, tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
