package python

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	_ "github.com/sluicehq/sluice/transforms/javascript" // language javascript, for the goja cases
	_ "github.com/sluicehq/sluice/transforms/sql"        // language sql, for the SQL case
)

// gameEvent is a row like Beam's GAME_EVENT examples: user, team, score, timestamp.
var gameEvent = schemas.New(
	schemas.Field{Name: "user", Type: typ(schemas.String)},
	schemas.Field{Name: "team", Type: typ(schemas.String)},
	schemas.Field{Name: "score", Type: typ(schemas.Int64)},
	schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
)

func gameEvents(n int) []schemas.Row {
	teams := []string{"red", "blue", "green"}
	rows := make([]schemas.Row, n)
	for i := range rows {
		rows[i] = schemas.Row{fmt.Sprintf("user-%d", i%997), teams[i%3], int64(i % 200),
			time.Date(2024, 5, 1, 10, 0, i%60, 0, time.UTC)}
	}
	return rows
}

// The work of MapToFields (three computed fields) and Filter on one row, as expressions and
// as callables of the same meaning.
var (
	benchExprs = []string{`score * 2`, `team + ":" + user`, `score > 100 and team == "red"`,
		`score >= 10 and user != "bot"`}
	benchCallables = []string{`lambda row: row.score * 2`, `lambda row: row.team + ":" + row.user`,
		`lambda row: row.score > 100 and row.team == "red"`, `lambda row: row.score >= 10 and row.user != "bot"`}
	// The same in JavaScript (language javascript, on goja).
	benchJSExprs = []string{`score * 2`, `team + ":" + user`, `score > 100 && team === "red"`,
		`score >= 10 && user !== "bot"`}
	benchJSCallables = []string{`row => row.score * 2`, `row => row.team + ":" + row.user`,
		`row => row.score > 100 && row.team === "red"`, `row => row.score >= 10 && row.user !== "bot"`}
	// The same in SQL (language sql; the Sql transform compiles its SELECT list the same way).
	benchSQLExprs = []string{`score * 2`, `team || ':' || user`, `score > 100 AND team = 'red'`,
		`score >= 10 AND user <> 'bot'`}
)

// cpuTime is the CPU time the process has used (user and system, all threads): on a
// machine shared with other work, rows per CPU-second compare the engines where rows per
// wall-clock second do not.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMapFilter compares, on GAME_EVENT-like rows, the expr-lang fast path, the same
// expressions on Starlark, Starlark callables, and the same in JavaScript on goja: rows/s of
// three MapToFields fields and a Filter.
func BenchmarkMapFilter(b *testing.B) {
	compile := func(b *testing.B, kind expr.SourceKind, texts []string, starlark bool, lang string) []*expr.Program {
		var progs []*expr.Program
		for _, text := range texts {
			src := expr.Source{Kind: kind, Expr: component.Expr{Text: text, Pos: diag.Pos{File: "b.yaml", Line: 1, Col: 1}}}
			o := expr.Options{Language: lang}
			var p *expr.Program
			var err error
			switch {
			case starlark:
				p, err = expr.CompileWith(engine{}, src, gameEvent, o)
			case lang == "javascript":
				p, err = expr.Spec{Expr: src.Expr, Kind: kind}.Compile(gameEvent, o)
			default:
				p, err = expr.Compile(src.Expr, gameEvent, o)
			}
			if err != nil {
				b.Fatal(err)
			}
			progs = append(progs, p)
		}
		return progs
	}
	for _, c := range []struct {
		name     string
		kind     expr.SourceKind
		texts    []string
		starlark bool
		lang     string
	}{
		{"expr", expr.KindExpression, benchExprs, false, "python"},
		{"starlark-expression", expr.KindExpression, benchExprs, true, "python"},
		{"starlark-callable", expr.KindCallable, benchCallables, true, "python"},
		{"goja-expression", expr.KindExpression, benchJSExprs, false, "javascript"},
		{"goja-callable", expr.KindCallable, benchJSCallables, false, "javascript"},
		{"sql-expression", expr.KindExpression, benchSQLExprs, false, "sql"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev := expr.NewEvaluator(gameEvent, compile(b, c.kind, c.texts, c.starlark, c.lang)...)
			rows := gameEvents(500)
			kept := 0
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for b.Loop() {
				s := ev.Scope()
				for _, r := range rows {
					s.Bind(r)
					for i := range 3 {
						if _, err := s.Eval(i); err != nil {
							b.Fatal(err)
						}
					}
					keep, err := s.Eval(3)
					if err != nil {
						b.Fatal(err)
					}
					if keep.(bool) {
						kept++
					}
				}
				s.Release()
			}
			b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.N*len(rows))/(cpuTime(b)-cpu0).Seconds(), "rows/cpu-s")
			if kept == 0 {
				b.Fatal("nothing kept")
			}
		})
	}
}
