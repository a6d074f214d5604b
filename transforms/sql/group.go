package sql

import (
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/combine"
	"github.com/sluicehq/sluice/transforms/window"
)

// grouping is a grouped query compiled onto Combine's plan: before the grouping each row
// becomes the keys and the aggregates' arguments (pre, over the input); the Combine state
// keeps one accumulator per aggregate, key and window; after it HAVING and the SELECT list
// run over the combined rows with the window's bounds (post).
type grouping struct {
	keys  []node   // over the input
	texts []string // the keys' text, to match SELECT items with them
	aggs  []aggregate
	// mid is the schema of the rows the Combine plan reads: the keys, then the arguments.
	mid *schemas.Schema
	// win is the window of GROUP BY TUMBLE/HOP/SESSION, nil for the transform's windowing.
	win *sqlWindow
	// post are the SELECT list over the combined rows; having filters them.
	post   []node
	having *node
	out    *schemas.Schema
}

// aggregate is one aggregate call of the query.
type aggregate struct {
	text string
	name string // upper case: COUNT, SUM, ...
	arg  node   // over the input; for COUNT(*) a constant
	fn   combine.Fn
	// finish turns the combined value into the SQL result: COUNT(DISTINCT) counts the
	// collected values, AVG of BIGINTs truncates.
	finish func(v any) any
	typ    schemas.Type
	null   bool
}

// sqlWindow is the window of GROUP BY TUMBLE, HOP or SESSION.
type sqlWindow struct {
	kind string // tumble, hop, session
	ts   node   // the event time column
	fn   window.Fn
}

func (q *query) compileGrouping() *grouping {
	c, sel := q.c, q.sel
	g := &grouping{}
	if sel.GroupBy != nil {
		for _, item := range sel.GroupBy.Items {
			if fc, ok := item.Expr.(*ast.FuncCallExpr); ok && isWindowFn(fnName(fc)) {
				g.window(c, fc)
				continue
			}
			e, ok := q.selected(item.Expr)
			if !ok {
				continue
			}
			k, ok := c.expr(e)
			if !ok {
				continue
			}
			g.keys = append(g.keys, k)
			g.texts = append(g.texts, restore(e))
		}
	}
	var calls []*ast.AggregateFuncExpr
	found := false
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			c.errorf(sel, "SELECT * is not supported with GROUP BY: name the grouped columns and aggregates")
			continue
		}
		f.Expr.Accept(&aggFinder{found: &found, list: &calls})
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(&aggFinder{found: &found, list: &calls})
	}
	for _, call := range calls {
		g.aggregate(c, call)
	}
	fields := make([]schemas.Field, 0, len(g.keys)+len(g.aggs))
	for i, k := range g.keys {
		fields = append(fields, schemas.Field{Name: fmt.Sprintf("$key%d", i), Type: k.typ, Nullable: k.null})
	}
	for j, a := range g.aggs {
		fields = append(fields, schemas.Field{Name: fmt.Sprintf("$arg%d", j), Type: a.arg.typ, Nullable: a.arg.null})
	}
	g.mid = schemas.New(fields...)
	c.scope = &groupScope{g: g}
	var out []schemas.Field
	names := map[string]bool{}
	for i, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			continue
		}
		n, ok := c.expr(f.Expr)
		if !ok {
			continue
		}
		name := outputName(f, i)
		if names[name] {
			c.errorf(f.Expr, "the output has two columns named %q; give one an alias (AS name)", name)
			continue
		}
		names[name] = true
		g.post = append(g.post, n)
		out = append(out, schemas.Field{Name: name, Type: n.typ, Nullable: n.null})
	}
	if sel.Having != nil {
		if h, ok := c.boolean(sel.Having.Expr, "HAVING"); ok {
			g.having = &h
		}
	}
	g.out = schemas.New(out...)
	c.scope = q.input
	return g
}

// selected resolves a GROUP BY item that names a SELECT item, as Calcite's lenient
// conformance (Beam SQL's) allows: by its position (GROUP BY 1), or by its alias when no
// input column has that name.
func (q *query) selected(e ast.ExprNode) (ast.ExprNode, bool) {
	fields := q.sel.Fields.Fields
	var item *ast.SelectField
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.P != nil || x.N < 1 || x.N > len(fields) {
			q.c.errorf(e, "GROUP BY %d: the SELECT list has %d items", x.N, len(fields))
			return nil, false
		}
		item = fields[x.N-1]
	case *ast.ColumnNameExpr:
		if x.Name.Table.O != "" {
			return e, true
		}
		if _, isColumn := lookup(q.input.in.Fields, x.Name.Name.O); isColumn {
			return e, true
		}
		for _, f := range fields {
			if f.AsName.O != "" && strings.EqualFold(f.AsName.O, x.Name.Name.O) {
				item = f
			}
		}
	}
	switch {
	case item == nil:
		return e, true
	case item.WildCard != nil:
		q.c.errorf(e, "GROUP BY names *: name the columns")
		return nil, false
	case hasAggregate(&ast.FieldList{Fields: []*ast.SelectField{item}}):
		q.c.errorf(e, "GROUP BY %s names an aggregate: group by columns or expressions of them", restore(e))
		return nil, false
	}
	return item.Expr, true
}

func isWindowFn(name string) bool { return name == "tumble" || name == "hop" || name == "session" }

// window compiles GROUP BY TUMBLE(ts, size), HOP(ts, slide, size) or SESSION(ts, gap).
func (g *grouping) window(c *compiler, fc *ast.FuncCallExpr) {
	name := fnName(fc)
	want := map[string]int{"tumble": 2, "hop": 3, "session": 2}[name]
	if g.win != nil {
		c.errorf(fc, "GROUP BY has two windows; a query groups by one")
		return
	}
	if len(fc.Args) != want {
		c.errorf(fc, "%s takes %d arguments: the timestamp column and %s", strings.ToUpper(name), want,
			map[string]string{"tumble": "the size", "hop": "the slide and the size", "session": "the gap"}[name])
		return
	}
	ts, ok := c.expr(fc.Args[0])
	if ok && ts.typ.Kind != schemas.Timestamp {
		c.errorf(fc.Args[0], "%s needs a TIMESTAMP column, but %s is %s", strings.ToUpper(name), restore(fc.Args[0]), sqlName(ts.typ))
		ok = false
	}
	var ds []time.Duration
	for _, a := range fc.Args[1:] {
		d, good := c.expr(a)
		if good && !d.interval {
			c.errorf(a, "%s needs an INTERVAL, e.g. INTERVAL '1' MINUTE", strings.ToUpper(name))
			good = false
		}
		ok = ok && good
		if good {
			v, _ := d.eval(nil)
			if _, calendar := v.(months); calendar {
				c.errorf(a, "%s needs an INTERVAL of fixed length (MILLISECOND to DAY): months and years vary", strings.ToUpper(name))
				ok = false
				continue
			}
			ds = append(ds, v.(time.Duration))
		}
	}
	if !ok {
		return
	}
	w := &sqlWindow{kind: name, ts: ts}
	switch name {
	case "tumble":
		w.fn = window.Fixed(ds[0], 0)
	case "hop":
		w.fn = window.Sliding(ds[1], ds[0], 0) // HOP(ts, slide, size)
	case "session":
		w.fn = window.Sessions(ds[0])
	}
	g.win = w
}

// aggregateFns are the aggregate functions and the combine function each runs on.
var aggregateFns = map[string]combine.Fn{"count": combine.Count, "sum": combine.Sum, "avg": combine.Mean, "min": combine.Min, "max": combine.Max,
	"countif": combine.Sum}

// aggregate compiles one aggregate call, once per distinct text.
func (g *grouping) aggregate(c *compiler, call *ast.AggregateFuncExpr) {
	text := restore(call)
	for _, a := range g.aggs {
		if a.text == text {
			return
		}
	}
	name := strings.ToLower(call.F)
	fn, known := aggregateFns[name]
	if !known {
		c.errorf(call, "the aggregate function %s is not supported: sluice has COUNT, SUM, AVG, MIN, MAX and COUNTIF", strings.ToUpper(call.F))
		return
	}
	if call.Distinct && name != "count" {
		c.errorf(call, "%s(DISTINCT ...) is not supported: only COUNT(DISTINCT ...)", strings.ToUpper(name))
		return
	}
	if len(call.Args) != 1 {
		c.errorf(call, "%s takes one argument", strings.ToUpper(name))
		return
	}
	a := aggregate{text: text, name: strings.ToUpper(name), fn: fn}
	if v, isStar := call.Args[0].(interface{ GetValue() any }); isStar && name == "count" && v.GetValue() != nil && !call.Distinct {
		// COUNT(*): TiDB's parser gives the constant 1.
		a.arg = constant(tInt, int64(1))
	} else {
		saved := c.scope
		arg, ok := c.expr(call.Args[0])
		c.scope = saved
		if !ok {
			return
		}
		if name == "countif" {
			// COUNTIF(condition), BigQuery's: the rows where it is TRUE, a sum of ones.
			if arg.typ.Kind != schemas.Bool && arg.typ.Kind != schemas.Any {
				c.errorf(call.Args[0], "COUNTIF needs a BOOLEAN, but %s is %s", restore(call.Args[0]), sqlName(arg.typ))
				return
			}
			cond := arg
			arg = node{typ: tInt, eval: func(r schemas.Row) (any, error) {
				v, err := cond.eval(r)
				return b2i(v == true), err
			}}
		}
		if (fn == combine.Sum || fn == combine.Mean) && !isNumber(arg.typ) {
			c.errorf(call.Args[0], "%s needs numbers, but %s is %s", a.name, restore(call.Args[0]), sqlName(arg.typ))
			return
		}
		a.arg = arg
	}
	a.typ, a.null = a.arg.typ, a.arg.null
	switch {
	case call.Distinct:
		a.fn, a.typ, a.null = combine.Group, tInt, false
		a.finish = countDistinct
	case fn == combine.Count && a.arg.null:
		// COUNT(x) counts the rows where x is not null: a sum of ones.
		arg := a.arg
		a.arg = node{typ: tInt, eval: func(r schemas.Row) (any, error) {
			v, err := arg.eval(r)
			return b2i(v != nil), err
		}}
		a.fn, a.typ, a.null = combine.Sum, tInt, false
	case fn == combine.Count:
		a.typ, a.null = tInt, false
	case fn == combine.Mean && a.arg.typ.Kind == schemas.Int64:
		a.finish = func(v any) any { // Calcite: AVG of BIGINTs is a BIGINT
			if f, ok := v.(float64); ok {
				return int64(f)
			}
			return v
		}
	case fn == combine.Mean:
		a.typ = tFloat
	}
	a.arg.at = call
	g.aggs = append(g.aggs, a)
}

// countDistinct counts the distinct non-null values combine's group collected.
func countDistinct(v any) any {
	list, _ := v.([]any)
	seen := make(map[any]bool, len(list))
	for _, x := range list {
		if x != nil {
			seen[fmt.Sprint(x)] = true
		}
	}
	return int64(len(seen))
}

// groupScope resolves the names of a grouped query's output: the grouped expressions, the
// aggregates and the window's bounds. Its rows are the Combine plan's output (the keys,
// then the aggregates) and the window's start and end.
type groupScope struct{ g *grouping }

func (s *groupScope) column(c *compiler, n *ast.ColumnNameExpr) (node, bool) {
	c.errorf(n, "column %q is neither in GROUP BY nor inside an aggregate function", n.Name.Name.O).
		Detail = "add it to GROUP BY, or aggregate it (MIN, MAX, ...)"
	return node{}, false
}

func (s *groupScope) special(c *compiler, e ast.ExprNode) (node, bool, bool) {
	g := s.g
	text := restore(e)
	for i, k := range g.texts {
		if strings.EqualFold(k, text) { // names are matched as the input's are: case aside
			return node{typ: g.keys[i].typ, null: g.keys[i].null, eval: func(r schemas.Row) (any, error) { return r[i], nil }}, true, true
		}
	}
	switch e := e.(type) {
	case *ast.AggregateFuncExpr:
		for j, a := range g.aggs {
			if a.text != text {
				continue
			}
			i, finish := len(g.keys)+j, a.finish
			t, null := a.typ, a.null
			if a.fn == combine.Mean || a.fn == combine.Sum || a.fn == combine.Min || a.fn == combine.Max {
				out, nullable := combine.Agg{Fn: a.fn, In: a.arg.typ, Nullable: a.arg.null}.Out()
				if finish == nil {
					t = out
				}
				null = nullable
			}
			return node{typ: t, null: null, eval: func(r schemas.Row) (any, error) {
				if finish != nil {
					return finish(r[i]), nil
				}
				return r[i], nil
			}}, true, true
		}
		return node{}, true, false // reported when it was collected
	case *ast.FuncCallExpr:
		name := e.FnName.L
		kind, bound, isBound := strings.Cut(name, "_")
		if !isBound || !isWindowFn(kind) || (bound != "start" && bound != "end") {
			return node{}, false, true
		}
		if g.win == nil || g.win.kind != kind {
			c.errorf(e, "%s needs GROUP BY %s(...) in the same query", strings.ToUpper(name), strings.ToUpper(kind))
			return node{}, true, false
		}
		i := len(g.keys) + len(g.aggs)
		if bound == "end" {
			i++
		}
		return node{typ: tTime, eval: func(r schemas.Row) (any, error) { return r[i], nil }}, true, true
	}
	return node{}, false, true
}
