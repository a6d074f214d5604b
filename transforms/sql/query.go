package sql

import (
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// query is a compiled SELECT: a filter and a projection over the input, or, when it groups,
// the keys and aggregate arguments computed before the grouping and the HAVING and SELECT
// list over its results (group.go).
type query struct {
	c     *compiler
	sel   *ast.SelectStmt
	input *inputScope
	join  *sqlJoin // nil for a query over one table
	where *node
	// items are the SELECT list of a query that does not group, over the input.
	items []node
	out   *schemas.Schema
	group *grouping // nil when the query does not group
}

// compileQuery checks stmt, a SELECT over the inputs ins (FROM one of them, or JOINs of
// them, planned by plan), and compiles it.
func compileQuery(c *compiler, stmt ast.StmtNode, ins []component.Input, plan planner) *query {
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok {
		c.errorf(stmt, "Sql runs a SELECT, not %s", stmtKind(stmt))
		return nil
	}
	q := &query{c: c, sel: sel}
	if !q.checkShape() || !q.from(ins, plan) {
		return nil // the rest would only repeat the problem
	}
	c.scope = q.input
	if sel.Where != nil {
		if w, ok := c.boolean(sel.Where, "WHERE"); ok {
			q.where = &w
		}
	}
	if sel.Distinct {
		q.distinct()
	}
	if sel.GroupBy != nil || sel.Having != nil || hasAggregate(sel.Fields) {
		q.group = q.compileGrouping()
		if q.join != nil && q.group.win != nil {
			c.errorf(sel, "GROUP BY %s over a JOIN is not supported: the join's windows are the transform's", strings.ToUpper(q.group.win.kind)).
				Detail = "set them with windowing: (e.g. {type: fixed, size: 1m}) and group by the columns only"
		}
		return q
	}
	q.compileItems()
	return q
}

func stmtKind(stmt ast.StmtNode) string {
	t := fmt.Sprintf("%T", stmt)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "*ast."), "Stmt")
	return strings.ToUpper(t)
}

// checkShape reports the parts of a SELECT that sluice does not run, each by name.
func (q *query) checkShape() bool {
	sel, c := q.sel, q.c
	before := len(c.diags)
	unsupported := func(what string) {
		c.errorf(sel, "%s is not supported in Sql", what)
	}
	if sel.From == nil {
		unsupported("a SELECT without FROM")
	}
	if sel.Distinct && (sel.GroupBy != nil || sel.Having != nil || hasAggregate(sel.Fields)) {
		unsupported("SELECT DISTINCT with GROUP BY or aggregates")
	}
	if sel.Limit != nil {
		unsupported("LIMIT")
	}
	if sel.WindowSpecs != nil {
		unsupported("WINDOW")
	}
	if sel.With != nil {
		unsupported("WITH")
	}
	return len(c.diags) == before
}

// hasAggregate reports whether the SELECT list calls an aggregate function.
func hasAggregate(fields *ast.FieldList) bool {
	found := false
	for _, f := range fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(&aggFinder{found: &found})
		}
	}
	return found
}

// aggFinder visits an expression looking for aggregate calls.
type aggFinder struct {
	found *bool
	list  *[]*ast.AggregateFuncExpr
}

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	if a, ok := n.(*ast.AggregateFuncExpr); ok {
		*v.found = true
		if v.list != nil {
			*v.list = append(*v.list, a)
		}
		return n, true
	}
	return n, false
}

func (v *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// outputName is the name of a SELECT item's column: its alias, the column it reads, or
// Calcite's EXPR$<index>.
func outputName(f *ast.SelectField, i int) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	if col, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return col.Name.Name.O
	}
	return fmt.Sprintf("EXPR$%d", i)
}

// compileItems compiles the SELECT list of a query that does not group.
func (q *query) compileItems() {
	var fields []schemas.Field
	names := map[string]bool{}
	for i, f := range q.sel.Fields.Fields {
		if f.WildCard != nil {
			first, cols := 0, q.input.in.Fields
			if t := f.WildCard.Table.O; t != "" && q.input.joined != nil {
				tab := q.input.joinedTable(q.c, q.sel, t)
				if tab == nil {
					continue
				}
				first, cols = tab.offset, cols[tab.offset:tab.offset+len(tab.schema.Fields)]
			}
			for j, in := range cols {
				q.items = append(q.items, readField(first+j, in))
				fields = append(fields, schemas.Field{Name: in.Name, Type: sqlType(in.Type), Nullable: in.Nullable})
				names[in.Name] = true
			}
			continue
		}
		n, ok := q.c.expr(f.Expr)
		if !ok {
			continue
		}
		name := outputName(f, i)
		if names[name] {
			q.c.errorf(f.Expr, "the output has two columns named %q; give one an alias (AS name)", name)
			continue
		}
		names[name] = true
		q.items = append(q.items, n)
		fields = append(fields, schemas.Field{Name: name, Type: n.typ, Nullable: n.null})
	}
	q.out = schemas.New(fields...)
}

// nowUTC is CURRENT_TIMESTAMP's clock.
func nowUTC() time.Time { return time.Now().UTC() }

// distinct makes SELECT DISTINCT a GROUP BY of every selected column (of every input column
// for *), as Calcite plans it: one row per distinct combination and window.
func (q *query) distinct() {
	var fields []*ast.SelectField
	for _, f := range q.sel.Fields.Fields {
		if f.WildCard == nil {
			fields = append(fields, f)
			continue
		}
		for j, in := range q.input.in.Fields {
			name := &ast.ColumnName{Name: ast.NewCIStr(in.Name)}
			for _, t := range q.input.joined { // a joined row's column by its table and own name
				if j >= t.offset && j < t.offset+len(t.schema.Fields) {
					name = &ast.ColumnName{Table: ast.NewCIStr(t.name), Name: ast.NewCIStr(t.schema.Fields[j-t.offset].Name)}
				}
			}
			col := &ast.ColumnNameExpr{Name: name}
			col.SetOriginTextPosition(f.Offset)
			fields = append(fields, &ast.SelectField{Expr: col, AsName: ast.NewCIStr(in.Name)})
		}
	}
	q.sel.Fields.Fields = fields
	q.sel.GroupBy = &ast.GroupByClause{}
	for _, f := range fields {
		q.sel.GroupBy.Items = append(q.sel.GroupBy.Items, &ast.ByItem{Expr: f.Expr})
	}
}
