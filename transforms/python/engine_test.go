package python

import (
	"strings"
	"testing"

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
)

func gameRow() schemas.Row {
	return schemas.Row{"alice", "red", int64(12), nil, nil, []any{"a", "b"}, map[string]any{"city": "Paris", "zip": int64(75001)}}
}

// run compiles src (kind) with language python and evaluates it on gameRow.
func run(t *testing.T, kind expr.SourceKind, text string) (any, *expr.Program, error) {
	t.Helper()
	spec := expr.Spec{Expr: component.Expr{Text: text, Pos: diag.Pos{File: "p.yaml", Line: 3, Col: 7}}, Kind: kind}
	p, err := spec.Compile(gameSchema, expr.Options{Language: "python"})
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

func TestExpressions(t *testing.T) {
	for _, tt := range []struct {
		text string
		want any
		kind schemas.Kind
	}{
		{`"big" if score > 10 else "small"`, "big", schemas.String},
		{`user.upper()`, "ALICE", schemas.String},
		{`f"{user}: {score:>4d} {ratio}"`, "alice:   12 None", schemas.String},
		{`"%s has %d" % (user, score)`, "alice has 12", schemas.String},
		{`[t.upper() for t in tags]`, []any{"A", "B"}, schemas.Array},
		{`str(score) + "!"`, "12!", schemas.String},
		{`round(2.5)`, int64(2), schemas.Int64},
		{`nick is None`, true, schemas.Bool},
		{`nick is not None and nick.startswith("x")`, false, schemas.Bool},
		{`len(user) + sum([1, 2])`, int64(8), schemas.Int64}, // expr-lang runs it
		{`loc["city"] if False else "x"`, "x", schemas.Any},
		{`user.split("i")`, []any{"al", "ce"}, schemas.Array},
	} {
		t.Run(tt.text, func(t *testing.T) {
			v, p, err := run(t, expr.KindExpression, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Type().Kind; got != tt.kind {
				t.Errorf("type %v, want %v", got, tt.kind)
			}
			if !equal(v, tt.want) {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
		})
	}
}

func TestCallables(t *testing.T) {
	checkValues(t, expr.KindCallable, []valueCase{
		{`lambda row: row.score * 2`, int64(24)},
		{`lambda row: row.loc.city.lower()`, "paris"},
		{"def f(row):\n  if row.score > 10:\n    return 'hi ' + row.user\n  return 'lo'", "hi alice"},
		{"import re\ndef f(row):\n  m = re.match(r'(a)(l)', row.user)\n  return m.group(2) if m else None", "l"},
		{"import json\nlambda_ = None\ndef f(row):\n  return json.dumps({'u': row.user, 'n': [1, 2.5]})", `{"u": "alice", "n": [1, 2.5]}`},
		{"from math import sqrt\ndef f(row):\n  return sqrt(row.score + 4)", 4.0},
		{"def f(row):\n  return any(t.upper() in 'AEIOU' for t in row.tags) and sum(len(t) for t in row.tags)", int64(2)},
		{"def f(row: 'beam.Row', n: int = 2,\n      k=[1]) -> str:\n  return row.user * n", "alicealice"},
	})
}

func TestErrors(t *testing.T) {
	checkErrors(t, []errorCase{
		{expr.KindCallable, "lambda row: row.scor", `p.yaml:3:23: AttributeError: the row has no field "scor" (did you mean "score"?)`},
		{expr.KindCallable, "import pandas\ndef f(row):\n  return 1", `p.yaml:3:14: ModuleNotFoundError: no module named "pandas"`},
		{expr.KindCallable, "def f(row):\n  return row.score +", `p.yaml:4:`},
		{expr.KindCallable, "lambda a, b: a", `takes 2`},
		{expr.KindExpression, `loc.cty.upper() if True else [loc.x for loc in tags]`, `p.yaml:3:11: AttributeError: "loc" has no field "cty" (did you mean "city"?)`},
		{expr.KindCallable, `lambda row: row.loc.zpi`, `p.yaml:3:27: AttributeError: "loc" has no field "zpi" (did you mean "zip"?)`},
		{expr.KindExpression, `scroe if True else 1`, `NameError: name "scroe" is not defined (did you mean "score"?)`},
		{expr.KindCallable, "import re\ndef f(row):\n  return re.match(r\"(?=x)\", row.user)", `p.yaml:5:19: the pattern "(?=x)" uses lookahead`},
	})
}

func TestRuntimeError(t *testing.T) {
	_, _, err := run(t, expr.KindCallable, "def f(row):\n  x = 1\n  return row.score / (x - 1)")
	var ee *expr.Error
	if err == nil || !asError(err, &ee) {
		t.Fatalf("error %v, want an *expr.Error", err)
	}
	if got, want := ee.Error(), "p.yaml:5:"; !strings.HasPrefix(got, want) || !strings.Contains(got, "ZeroDivisionError") {
		t.Errorf("error %q, want %s... ZeroDivisionError", got, want)
	}
}

// Block scalars bring indentation and trailing newlines.
func TestBlockText(t *testing.T) {
	checkValues(t, expr.KindCallable, []valueCase{{"lambda row: row.score + 1\n", int64(13)}, {"\n  lambda row: row.user\n\n", "alice"}})
	checkValues(t, expr.KindExpression, []valueCase{{"score + 1 if True else 0\n", int64(13)}, {"[x for x in tags]  # comment\n", []any{"a", "b"}}})
}
