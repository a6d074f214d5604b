package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

func init() { expr.RegisterEngine("sql", engine{}) }

// engine compiles `language: sql` expressions of MapToFields and Filter: the text is parsed
// as the one item of "SELECT <text> FROM PCOLLECTION" and compiled by the Sql transform's
// compiler against the input's columns.
type engine struct{}

func (engine) Compile(src expr.Source, in *schemas.Schema, o expr.Options) (expr.Dynamic, error) {
	if src.Kind != expr.KindExpression {
		return nil, diag.Diagnostic{Pos: src.Expr.Pos, Summary: "language sql takes expressions, not callables or files",
			Detail: "write the expression itself, e.g. keep: \"score > 10 AND team <> 'red'\""}
	}
	s := &source{e: src.Expr, lines: o.Lines, prefix: "SELECT ", suffix: "\nFROM PCOLLECTION"}
	stmt, err := s.parse()
	if err != nil {
		return nil, err
	}
	c := &compiler{src: s, scope: &inputScope{in: in, tables: []string{"PCOLLECTION"}}, now: nowUTC}
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok || len(sel.Fields.Fields) != 1 || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil || sel.Limit != nil {
		return nil, diag.Diagnostic{Pos: s.pos(len(s.prefix)), Summary: "language sql takes one expression here, not a query",
			Detail: "a query (SELECT ... FROM PCOLLECTION) is the Sql transform's"}
	}
	f := sel.Fields.Fields[0]
	if f.WildCard != nil || f.AsName.O != "" {
		return nil, diag.Diagnostic{Pos: s.pos(len(s.prefix)), Summary: "language sql takes one expression here, without * or AS"}
	}
	n, ok := c.expr(f.Expr)
	if err := c.diags.Err(); err != nil || !ok {
		return nil, err
	}
	if o.Truth {
		n = truth(n)
	}
	return dynamic{n}, nil
}

// truth makes a Filter's condition keep only TRUE rows, as WHERE does: NULL is not kept.
func truth(n node) node {
	if n.typ.Kind != schemas.Bool && n.typ.Kind != schemas.Any {
		return n // Filter reports that keep is not a boolean
	}
	eval := n.eval
	return node{typ: tBool, at: n.at, eval: func(r schemas.Row) (any, error) {
		v, err := eval(r)
		return v == true, err
	}}
}

// dynamic is a compiled SQL expression as transforms/expr runs it: shared by lanes, with
// no per-lane state.
type dynamic struct{ n node }

func (d dynamic) Type() schemas.Type             { return d.n.typ }
func (d dynamic) Nullable() bool                 { return d.n.null }
func (d dynamic) NewRunner() expr.Runner         { return d }
func (d dynamic) Run(r schemas.Row) (any, error) { return d.n.eval(r) }

// compiled hands a node the compiler made to transforms/expr as an engine would, so that
// the Sql transform runs its expressions through expr.Evaluator like MapToFields and
// Filter do.
type compiled struct{ n node }

func (c compiled) Compile(expr.Source, *schemas.Schema, expr.Options) (expr.Dynamic, error) {
	return dynamic(c), nil
}

// program wraps n into an expr.Program over schema in, at the query's text.
func program(q component.Expr, n node, in *schemas.Schema) *expr.Program {
	p, err := expr.CompileWith(compiled{n}, expr.Source{Kind: expr.KindExpression, Expr: q}, in, expr.Options{Language: "sql"})
	if err != nil {
		panic(err) // compiled never fails
	}
	return p
}
