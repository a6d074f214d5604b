package sql

import (
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/join"
)

// FuzzCompile: any query text compiles to a query or to diagnostics, never a panic, and every
// diagnostic is placed inside the text. go test -run '^$' -fuzz FuzzCompile -fuzztime 30s ./transforms/sql
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"SELECT team, COUNT(*) AS n FROM PCOLLECTION GROUP BY team, TUMBLE(ts, INTERVAL '1' MINUTE) HAVING COUNT(*) > 1",
		"SELECT CAST(score AS VARCHAR(3)) || `user`, CASE WHEN ratio IS NULL THEN 0 END FROM PCOLLECTION WHERE TRUE",
		"SELECT SESSION_START(ts, INTERVAL '5' SECOND) AS s FROM PCOLLECTION GROUP BY SESSION(ts, INTERVAL '5' SECOND)",
		"SELECT TRIM(BOTH 'x' FROM user), EXTRACT(YEAR FROM ts + INTERVAL '1' DAY) AS rank FROM PCOLLECTION",
		"SELECT CAST(CAST(",
		"SELECT 'unterminated",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		src := &source{e: component.Expr{Text: text, Pos: diag.Pos{File: "f.yaml", Line: 2, Col: 10}}}
		stmt, err := src.parse()
		if err != nil {
			return
		}
		c := &compiler{src: src, now: nowUTC}
		compileQuery(c, stmt, []component.Input{{Name: "in", Schema: games}}, nil)
		for _, d := range c.diags {
			if d.Line < 2 || d.Line == 2 && d.Col < 10 {
				t.Errorf("diagnostic outside the text: %v", d)
			}
		}
	})
}

// FuzzCompileJoin: the same for queries over two named inputs, through the join planner.
// go test -run '^$' -fuzz FuzzCompileJoin -fuzztime 30s ./transforms/sql
func FuzzCompileJoin(f *testing.F) {
	for _, seed := range []string{
		"SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.customer = c.id AND o.id = c.id WHERE amount > 1",
		"SELECT name, COUNT(*) AS n FROM orders FULL OUTER JOIN customers USING (id) GROUP BY 1 HAVING COUNT(*) > 1",
		"SELECT DISTINCT customers.* FROM customers RIGHT JOIN orders ON customer = customers.id",
	} {
		f.Add(seed)
	}
	ins := []component.Input{{Name: "orders", Schema: orders, Named: true}, {Name: "customers", Schema: customers, Named: true}}
	f.Fuzz(func(t *testing.T, text string) {
		src := &source{e: component.Expr{Text: text, Pos: diag.Pos{File: "f.yaml", Line: 2, Col: 10}}}
		stmt, err := src.parse()
		if err != nil {
			return
		}
		ctx := &component.Context{Decoder: &component.Decoder{File: "f.yaml", Diags: &diag.List{}}, Type: "Sql", Inputs: ins}
		c := &compiler{src: src, now: nowUTC}
		compileQuery(c, stmt, ins, func(names []string, tables []*schemas.Schema, steps []join.Step) *join.Plan {
			return join.NewPlan(ctx, names, tables, steps)
		})
		for _, d := range c.diags {
			if d.Line < 2 || d.Line == 2 && d.Col < 10 {
				t.Errorf("diagnostic outside the text: %v", d)
			}
		}
	})
}
