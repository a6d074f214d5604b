package javascript

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

func TestExpressions(t *testing.T) {
	checkValues(t, expr.KindExpression, []valueCase{
		{`score * 2`, int64(24), schemas.Int64},
		{`score / 8`, 1.5, schemas.Float64},
		{`score > 10 ? "big" : "small"`, "big", schemas.String},
		{"`${user}:${score}`", "alice:12", schemas.String},
		{`user.toUpperCase() + "!"`, "ALICE!", schemas.String},
		{`nick === null && ratio == null`, true, schemas.Bool},
		{`tags.map(t => t.toUpperCase())`, []any{"A", "B"}, schemas.Any},
		{`loc.city + "/" + loc.zip`, "Paris/75001", schemas.String},
		{`ts.getUTCHours()`, int64(10), schemas.Any},
		{`user.length + tags.length`, int64(7), schemas.Int64},
		{`({n: score, s: [1, 2.5]})`, map[string]any{"n": int64(12), "s": []any{int64(1), 2.5}}, schemas.Any},
		{`user // a comment`, "alice", schemas.String},
	})
}

func TestCallables(t *testing.T) {
	checkValues(t, expr.KindCallable, []valueCase{
		{`row => row.score * 2`, int64(24), schemas.Int64},
		{`function (row) { return row.loc.city.toLowerCase(); }`, "paris", schemas.String},
		{"function grade(row) {\n  const points = row.score * 2;\n  if (points >= 20) return 'B';\n  return 'C';\n}", "B", schemas.String},
		{"function helper(x) { return x + 1 }\nfunction f(row) { return helper(row.score) }", int64(13), schemas.Any},
		{`row => new Date(row.ts.getTime() + 60000)`, gameTime.Add(time.Minute), schemas.Any},
		{`row => JSON.stringify(row)`, `{"user":"alice","team":"red","score":12,"ratio":null,"nick":null,"tags":["a","b"],"loc":{"city":"Paris","zip":75001},"ts":"2024-05-01T10:30:00.000Z"}`, schemas.String},
		{`row => ({...row.loc, user: row.user})`, map[string]any{"city": "Paris", "zip": int64(75001), "user": "alice"}, schemas.Any},
		{`row => row.nick`, nil, schemas.String},
		{`row => undefined`, nil, schemas.Any},
	})
}

func TestErrors(t *testing.T) {
	checkErrors(t, []errorCase{
		{expr.KindCallable, "row => row.scor", `p.yaml:3:18: TypeError: the row has no field "scor" (did you mean "score"?)`},
		{expr.KindCallable, "row => row.loc.zpi", `p.yaml:3:22: TypeError: "loc" has no field "zpi" (did you mean "zip"?)`},
		{expr.KindExpression, "loc.cty.toUpperCase()", `p.yaml:3:11: TypeError: "loc" has no field "cty" (did you mean "city"?)`},
		{expr.KindCallable, "function f(row) {\n  return row.score +\n}", `p.yaml:5:1: SyntaxError: Unexpected token }`},
		{expr.KindExpression, "score +* 2", `p.yaml:3:14: SyntaxError: Unexpected token *`},
		{expr.KindCallable, "(a, b) => a", `TypeError: the callable must take one argument (the row), but it takes 2`},
		{expr.KindCallable, "row.score", `the callable is not a function`},
		{expr.KindCallable, "var x = 1", `the callable defines no function`},
		{expr.KindCallable, "throw new Error('at init')\nfunction f(row) { return 1 }", `p.yaml:3:13: Error: at init`},
		{expr.KindCallable, "row => { let x = 1; let x = 2; return x }", `SyntaxError: Identifier 'x' has already been declared`},
	})
}

func TestInnerRowIsNotChecked(t *testing.T) {
	if _, _, err := run(t, expr.KindCallable, "row => row.tags.map(row => row.length)"); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeError(t *testing.T) {
	_, _, err := run(t, expr.KindCallable, "function f(row) {\n  const m = null;\n  return m.x + row.score;\n}")
	var ee *expr.Error
	if !errors.As(err, &ee) {
		t.Fatalf("error %v, want an *expr.Error", err)
	}
	if got, want := ee.Error(), "p.yaml:5:"; !strings.HasPrefix(got, want) || !strings.Contains(got, "TypeError: Cannot read property 'x'") {
		t.Errorf("error %q, want %s... TypeError: Cannot read property 'x' ...", got, want)
	}
	_, _, err = run(t, expr.KindCallable, "row => { throw 'no ' + row.user }")
	if err == nil || !strings.Contains(err.Error(), "p.yaml:3:16: Uncaught no alice") {
		t.Errorf("thrown string: %v", err)
	}
}

// Filter's keep takes JavaScript's truthiness (Beam applies Python's to the converted
// result; they differ only for empty arrays and objects).
func TestTruth(t *testing.T) {
	for text, want := range map[string]bool{`row => row.user`: true, `row => row.nick`: false, `row => row.score - 12`: false} {
		spec := expr.Spec{Expr: expr.Spec{}.Expr, Kind: expr.KindCallable}
		spec.Expr.Text = text
		v, p, err := runOpts(t, spec, expr.Options{Language: "javascript", Truth: true})
		if err != nil || v != want || p.Type().Kind != schemas.Bool {
			t.Errorf("%s: %v, %v, want %v", text, v, err, want)
		}
	}
}

// A declared output_type makes an integral number an integer, and a float a float.
func TestOutputType(t *testing.T) {
	for _, tt := range []struct {
		text string
		out  schemas.Kind
		want any
	}{{`row => row.score / 4`, schemas.Int64, int64(3)}, {`row => row.score`, schemas.Float64, 12.0}} {
		out := schemas.Type{Kind: tt.out}
		spec := expr.Spec{Kind: expr.KindCallable, OutputType: &out}
		spec.Expr.Text = tt.text
		v, _, err := runOpts(t, spec, expr.Options{Language: "javascript"})
		if err != nil || v != tt.want {
			t.Errorf("%s: %#v, %v, want %#v", tt.text, v, err, tt.want)
		}
	}
}

// Lanes run at once, each on a runtime of its own.
func TestConcurrentLanes(t *testing.T) {
	_, p, err := run(t, expr.KindCallable, "row => row.user + row.score")
	if err != nil {
		t.Fatal(err)
	}
	ev := expr.NewEvaluator(gameSchema, p)
	done := make(chan error)
	for range 8 {
		go func() {
			s := ev.Scope()
			defer s.Release()
			for range 200 {
				s.Bind(gameRow())
				v, err := s.Eval(0)
				if err == nil && v != "alice12" {
					err = errors.New("wrong value")
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// path + name: a function of a .js file, declared or held by a const.
func TestFile(t *testing.T) {
	file := func(name string) expr.Spec {
		s := expr.Spec{Kind: expr.KindFile, Name: name}
		s.Expr.Text = "const K = 3;\nfunction triple(row) { return row.score * K }\nconst shout = row => row.user.toUpperCase();\n"
		s.Expr.Pos.File, s.Expr.Pos.Line, s.Expr.Pos.Col = "udf.js", 1, 1
		return s
	}
	for name, want := range map[string]any{"triple": int64(36), "shout": "ALICE"} {
		v, _, err := runOpts(t, file(name), expr.Options{Language: "javascript"})
		if err != nil || v != want {
			t.Errorf("%s: %#v, %v, want %#v", name, v, err, want)
		}
	}
	if _, _, err := runOpts(t, file("K"), expr.Options{Language: "javascript"}); err == nil || !strings.Contains(err.Error(), `udf.js:1:1: the file defines no function "K"`) {
		t.Errorf("a constant as the function: %v", err)
	}
}

// Top-level code that does not end fails the build instead of hanging it.
func TestInitTimeout(t *testing.T) {
	defer func(d time.Duration) { initTimeout = d }(initTimeout)
	initTimeout = 50 * time.Millisecond
	_, _, err := run(t, expr.KindCallable, "while (true) {}\nfunction f(row) { return 1 }")
	if err == nil || !strings.Contains(err.Error(), "TimeoutError: the top-level code did not end within 50ms") {
		t.Errorf("error %v, want a timeout", err)
	}
}

// A row whose call does not end fails with a TimeoutError; the lane runs the next row.
func TestRowTimeout(t *testing.T) {
	defer func(d time.Duration) { rowTimeout = d }(rowTimeout)
	rowTimeout = 50 * time.Millisecond
	_, p, err := run(t, expr.KindCallable, "function f(row) { while (row.score > 0) {} return 0 }")
	if err == nil || !strings.Contains(err.Error(), "TimeoutError: the code did not end within 50ms for this row") {
		t.Fatalf("error %v, want a timeout", err)
	}
	s := expr.NewEvaluator(gameSchema, p).Scope()
	defer s.Release()
	row := gameRow()
	score, _ := gameSchema.Index("score")
	row[score] = int64(0)
	for range 3 {
		s.Bind(row)
		if v, err := s.Eval(0); err != nil || v != int64(0) {
			t.Fatalf("a row after the timeout: got %v, %v; want 0", v, err)
		}
	}
}

// A problem is reported once, with the others of the same code.
func TestErrorsOnce(t *testing.T) {
	_, _, err := run(t, expr.KindCallable, "var x = 1")
	if err == nil || strings.Count(err.Error(), "defines no function") != 1 {
		t.Errorf("error %v, want one 'defines no function'", err)
	}
}
