package sql

import (
	"context"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/combine"
	"github.com/sluicehq/sluice/transforms/join"
	"github.com/sluicehq/sluice/transforms/window"
)

// table is one table of a query's FROM: an input of the transform, and the names the query
// calls it by.
type table struct {
	input  int // its index in the transform's inputs
	name   string
	alias  string
	schema *schemas.Schema
	offset int // of its first field in a joined row
}

// names are the names a column may be qualified with.
func (t *table) is(name string) bool {
	return strings.EqualFold(t.name, name) || t.alias != "" && strings.EqualFold(t.alias, name)
}

// planner makes the join plan of FROM's tables (join.NewPlan over the transform's context),
// or nil when it reported a problem.
type planner func(names []string, ins []*schemas.Schema, steps []join.Step) *join.Plan

// sqlJoin is a query's FROM a JOIN b ...: the join plan, and for each of the transform's
// inputs its table's index in FROM.
type sqlJoin struct {
	plan  *join.Plan
	order []int
}

// fromItem is a table of FROM as written, with the JOIN that adds it (nil for the first).
type fromItem struct {
	src  *ast.TableSource
	name string
	join *ast.Join
}

// flatten lists the tables of FROM's tree of JOINs, which SQL builds to the left (a JOIN b
// JOIN c is (a JOIN b) JOIN c), in the order written.
func (q *query) flatten(n ast.ResultSetNode, out *[]fromItem, via *ast.Join) bool {
	switch n := n.(type) {
	case *ast.Join:
		if n.Right == nil {
			return q.flatten(n.Left, out, via)
		}
		if _, nested := n.Right.(*ast.Join); nested {
			q.c.errorf(q.sel, "a parenthesized JOIN on the right of a JOIN is not supported in Sql: write the joins one after another")
			return false
		}
		return q.flatten(n.Left, out, via) && q.flatten(n.Right, out, n)
	case *ast.TableSource:
		name, ok := n.Source.(*ast.TableName)
		if !ok {
			q.c.errorf(q.sel, "a subquery in FROM is not supported in Sql")
			return false
		}
		*out = append(*out, fromItem{src: n, name: name.Name.O, join: via})
		return true
	}
	q.c.errorf(q.sel, "this FROM is not supported in Sql")
	return false
}

// from resolves FROM's tables against the transform's inputs; with one table it is the
// query's one input, with several their JOINs are compiled onto a join plan.
func (q *query) from(ins []component.Input, plan planner) bool {
	c := q.c
	var items []fromItem
	if !q.flatten(q.sel.From.TableRefs, &items, nil) {
		return false
	}
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	var tables []*table
	used := make([]bool, len(ins))
	ok := true
	for _, it := range items {
		i := q.inputOf(it.name, ins)
		if i < 0 {
			hint := names
			if len(ins) == 1 {
				hint = []string{"PCOLLECTION", ins[0].Name}
			}
			d := c.diags.Add(c.src.word(it.name), "unknown table %q%s", it.name, diag.DidYouMean(it.name, hint))
			d.Detail = "the query reads its input as PCOLLECTION"
			if len(ins) > 1 {
				d.Detail = "the query reads its inputs by their names: " + strings.Join(names, ", ")
			}
			ok = false
			continue
		}
		if used[i] {
			c.diags.Add(c.src.word(it.name), "the query reads input %q twice: a self-join is not supported in Sql", names[i])
			ok = false
			continue
		}
		used[i] = true
		tables = append(tables, &table{input: i, name: it.name, alias: it.src.AsName.O, schema: ins[i].Schema})
	}
	if !ok {
		return false
	}
	for i, u := range used {
		if !u && len(ins) > 1 {
			c.errorf(q.sel, "the input %q is not in the query's FROM: join it, or leave it out of input", names[i])
			ok = false
		}
	}
	if len(tables) == 1 {
		q.input = &inputScope{in: tables[0].schema, tables: []string{"PCOLLECTION", names[tables[0].input]}}
		if a := tables[0].alias; a != "" {
			q.input.tables = append(q.input.tables, a)
		}
		return ok
	}
	offset := 0
	for _, t := range tables {
		t.offset = offset
		offset += len(t.schema.Fields)
	}
	steps := make([]join.Step, len(tables)-1)
	scope := &inputScope{joined: tables}
	for k, it := range items[1:] {
		s, good := q.joinStep(scope, tables, k+1, it.join)
		steps[k], ok = s, ok && good
	}
	if !ok {
		return false
	}
	if plan == nil {
		c.errorf(q.sel, "JOIN needs the Sql transform")
		return false
	}
	tNames := make([]string, len(tables))
	tSchemas := make([]*schemas.Schema, len(tables))
	order := make([]int, len(ins))
	for k, t := range tables {
		tNames[k], tSchemas[k], order[t.input] = names[t.input], t.schema, k
	}
	p := plan(tNames, tSchemas, steps)
	if p == nil {
		return false
	}
	scope.in = p.Out
	q.input = scope
	q.join = &sqlJoin{plan: p, order: order}
	return true
}

// inputOf returns the index of the input a table name reads, or -1.
func (q *query) inputOf(name string, ins []component.Input) int {
	if len(ins) == 1 && strings.EqualFold(name, "PCOLLECTION") {
		return 0
	}
	for i, in := range ins {
		if strings.EqualFold(in.Name, name) {
			return i
		}
	}
	return -1
}

// joinKinds are the join plan's kinds of TiDB's join types; FULL JOIN is read as
// STRAIGHT_JOIN (lex.go).
func joinKind(j *ast.Join) string {
	switch {
	case j.StraightJoin:
		return "outer"
	case j.Tp == ast.LeftJoin:
		return "left"
	case j.Tp == ast.RightJoin:
		return "right"
	}
	return "inner"
}

// joinStep compiles the JOIN that adds table k: its kind, and its ON equalities (or USING
// columns), each between a column of table k and one of a table before it.
func (q *query) joinStep(scope *inputScope, tables []*table, k int, j *ast.Join) (join.Step, bool) {
	c := q.c
	step := join.Step{Kind: joinKind(j)}
	switch {
	case j.NaturalJoin:
		c.errorf(q.sel, "NATURAL JOIN is not supported in Sql: name the columns, JOIN %s ON ... = ...", tables[k].name)
		return step, false
	case j.Using != nil:
		for _, col := range j.Using {
			l, lok := scope.resolve(c, &ast.ColumnNameExpr{Name: col}, 0, k)
			r, rok := scope.resolve(c, &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(tables[k].name), Name: col.Name}}, k, k+1)
			if !lok || !rok {
				return step, false
			}
			step.On = append(step.On, [2]join.Field{l, r})
			name := strings.ToLower(col.Name.O)
			if scope.using == nil {
				scope.using = map[string][]join.Field{}
			}
			if scope.using[name] == nil {
				scope.using[name] = []join.Field{l}
			}
			scope.using[name] = append(scope.using[name], r)
		}
		return step, true
	case j.On == nil:
		c.errorf(q.sel, "a JOIN without ON (a cross join) is not supported in Sql: join on equal columns, JOIN %s ON a.x = %s.y", tables[k].name, tables[k].name)
		return step, false
	}
	ok := true
	for _, e := range conjuncts(j.On.Expr) {
		eq, isEq := e.(*ast.BinaryOperationExpr)
		var l, r *ast.ColumnNameExpr
		if isEq && eq.Op == opcode.EQ {
			l, _ = unparen(eq.L).(*ast.ColumnNameExpr)
			r, _ = unparen(eq.R).(*ast.ColumnNameExpr)
		}
		if l == nil || r == nil {
			c.errorf(e, "this JOIN condition is not supported: sluice joins on equal columns (a.x = b.y), joined by AND").
				Detail = "filter on other conditions in WHERE"
			ok = false
			continue
		}
		a, aok := scope.resolve(c, l, 0, k+1)
		b, bok := scope.resolve(c, r, 0, k+1)
		if !aok || !bok {
			ok = false
			continue
		}
		if a.Input == k {
			a, b = b, a
		}
		if b.Input != k || a.Input == k {
			c.errorf(e, "the JOIN condition %s must compare a column of %s with one of the tables before it", restore(e), tables[k].name)
			ok = false
			continue
		}
		ta, tb := scope.fieldOf(a), scope.fieldOf(b)
		if !comparable(sqlType(ta.Type), sqlType(tb.Type)) || ta.Type.Kind == schemas.Struct || ta.Type.Kind == schemas.Array || ta.Type.Kind == schemas.Map {
			c.errorf(e, "cannot join on %s: %s is %s and %s is %s", restore(e), restore(l), sqlName(ta.Type), restore(r), sqlName(tb.Type))
			ok = false
			continue
		}
		step.On = append(step.On, [2]join.Field{a, b})
	}
	return step, ok
}

// conjuncts splits a condition into the parts AND joins.
func conjuncts(e ast.ExprNode) []ast.ExprNode {
	e = unparen(e)
	if b, ok := e.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []ast.ExprNode{e}
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// resolve finds the table and field of a column among the tables from, to of a join: a
// name qualified by a table's name or alias, or a name only one of them has.
func (s *inputScope) resolve(c *compiler, n *ast.ColumnNameExpr, from, to int) (join.Field, bool) {
	qual, name := n.Name.Table.O, n.Name.Name.O
	if n.Name.Schema.O != "" {
		c.errorf(n, "%s: a join's column is table.column; fields of struct columns are read in WHERE and SELECT", restore(n))
		return join.Field{}, false
	}
	var all []string
	found := join.Field{Input: -1}
	for k := from; k < to; k++ {
		t := s.joined[k]
		for _, f := range t.schema.Fields {
			all = append(all, t.name+"."+f.Name)
		}
		if qual != "" && !t.is(qual) {
			continue
		}
		i, ok := lookup(t.schema.Fields, name)
		if !ok {
			continue
		}
		if found.Input >= 0 {
			c.errorf(n, "column %q is ambiguous: both %s and %s have it", name, s.joined[found.Input].name, t.name).
				Detail = "qualify it with its table, e.g. " + t.name + "." + name
			return found, false
		}
		found = join.Field{Input: k, Index: i}
	}
	if found.Input < 0 {
		want := name
		if qual != "" {
			want = qual + "." + name
		}
		c.errorf(n, "unknown column %q%s", want, diag.DidYouMean(want, all)).
			Detail = "the joined tables' columns are " + strings.Join(all, ", ")
	}
	return found, found.Input >= 0
}

func (s *inputScope) fieldOf(f join.Field) schemas.Field {
	return s.joined[f.Input].schema.Fields[f.Index]
}

// joinedColumn resolves a column of a joined row: [table.]column[.field ...]; the index is
// the column's in the joined row, keys the struct fields after it.
func (s *inputScope) joinedColumn(c *compiler, n *ast.ColumnNameExpr) (int, []string, bool) {
	parts := []string{n.Name.Schema.O, n.Name.Table.O, n.Name.Name.O}
	var path []string
	for _, p := range parts {
		if p != "" {
			path = append(path, p)
		}
	}
	col := &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(path[0])}}
	rest := path[1:]
	if len(path) > 1 {
		for _, t := range s.joined {
			if t.is(path[0]) {
				col.Name.Table, col.Name.Name = ast.NewCIStr(path[0]), ast.NewCIStr(path[1])
				rest = path[2:]
				break
			}
		}
	}
	col.SetOriginTextPosition(n.OriginTextPosition())
	f, ok := s.resolve(c, col, 0, len(s.joined))
	if !ok {
		return 0, nil, false
	}
	return s.joined[f.Input].offset + f.Index, rest, true
}

// joinedTable returns the table a wildcard (t.*) names, or nil (reported).
func (s *inputScope) joinedTable(c *compiler, at ast.Node, name string) *table {
	var names []string
	for _, t := range s.joined {
		if t.is(name) {
			return t
		}
		names = append(names, t.name)
	}
	c.errorf(at, "unknown table %q in %s.*%s", name, name, diag.DidYouMean(name, names))
	return nil
}

// joined runs a query over JOINs: the join plan's state (transforms/join's, so windows,
// late records and checkpoints are a Join's), then WHERE and the SELECT list over the rows
// each fired window joins; rows that fail there go to the error output.
type joined struct {
	component.Stateful
	post *stage
}

// reordered is the join plan with the transform's input numbers turned into FROM's.
type reordered struct {
	*join.Plan
	order []int
}

func (r reordered) AddInput(st *combine.State, input int, b *schemas.Batch, emit component.Emit) (combine.Stats, error) {
	return r.Plan.AddInput(st, r.order[input], b, emit)
}

func newJoined(ctx *component.Context, cfg *Config, q *query) *joined {
	in := q.join.plan.Out
	post := &stage{who: ctx.Describe(), time: -1, out: q.out,
		errors: ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)}
	post.compile(cfg.Query, in, q.where, q.items, nil)
	ctx.Output(component.Main, q.out)
	return &joined{Stateful: combine.NewStateful(ctx, reordered{q.join.plan, q.join.order}), post: post}
}

// Fire joins the windows the watermark closed and computes the query's rows from them.
func (j *joined) Fire(ctx context.Context, upstream schemas.Offsets, final bool, emit component.Emit) error {
	return j.Stateful.Fire(ctx, upstream, final, func(tag string, b *schemas.Batch) error {
		if tag != component.Main {
			return emit(tag, b)
		}
		out, errs, err := j.post.apply(b)
		if err != nil {
			return err
		}
		return emitResult(emit, out, errs, j.post.errors)
	})
}

// joinGrouped is a grouped query over JOINs. A fired window holds every joined row of that
// window, so its grouping is computed there and then, in a Combine plan's state that lives for
// one firing: the only state across epochs is the join's.
type joinGrouped struct {
	*grouped // its Stateful is the join's
	plan     *combine.Plan
	mid      *schemas.Schema // the keys, the arguments, the window's bounds
}

func newJoinGrouped(ctx *component.Context, cfg *Config, q *query) *joinGrouped {
	in := q.join.plan.Out
	pre := &stage{who: ctx.Describe(), time: -1, errors: ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)}
	plan, items, mid := q.group.plan(ctx.Describe(), cfg.Query, true)
	pre.compile(cfg.Query, in, q.where, items, nil)
	pre.out = q.group.mid
	k := len(q.group.keys)
	fields := append(append([]schemas.Field{}, plan.Out.Fields[:k]...), plan.Out.Fields[k+2:]...)
	state := combine.NewStateful(ctx, reordered{q.join.plan, q.join.order})
	return &joinGrouped{grouped: newPost(ctx, cfg.Query, q.group, fields, pre, state), plan: plan, mid: mid}
}

// Process adds the rows to the join.
func (j *joinGrouped) Process(ctx context.Context, input int, in *schemas.Batch, emit component.Emit) error {
	return j.Stateful.Process(ctx, input, in, emit)
}

// Fire joins the windows the watermark closed, groups their joined rows that pass WHERE by
// key and window, and computes HAVING and the SELECT list of each group.
func (j *joinGrouped) Fire(ctx context.Context, upstream schemas.Offsets, final bool, emit component.Emit) error {
	return j.Stateful.Fire(ctx, upstream, final, func(tag string, b *schemas.Batch) error {
		if tag != component.Main {
			return emit(tag, b)
		}
		mid, errs, err := j.pre.apply(b)
		if err != nil {
			return err
		}
		if err := j.pre.errors.Emit(errs, emit); err != nil || len(mid.Rows) == 0 {
			return err
		}
		out, errs, err := j.finish(j.group(mid, b.Pos[0].Source))
		if err != nil {
			return err
		}
		return emitResult(emit, out, errs, j.pre.errors)
	})
}

// group combines the keys and arguments of the joined rows of mid, per key and window, into
// rows of the keys and the aggregates, each with its window, positioned as the join's rows.
func (j *joinGrouped) group(mid *schemas.Batch, source string) *schemas.Batch {
	in := &schemas.Batch{Schema: j.mid, Time: mid.Time}
	for i, row := range mid.Rows {
		w := mid.Windows[i]
		in.Rows = append(in.Rows, append(row, w[0], w[1]))
	}
	st := j.plan.NewState(window.Fn{})
	// The plan's values read fields, which do not fail, and the global window takes every row.
	_, _ = j.plan.AddBatch(st, in, nil)
	out := j.plan.Rows(st.Fire(window.MaxWatermark))
	k := len(j.keys)
	out.Pos = make([]schemas.Position, len(out.Rows))
	for i, row := range out.Rows {
		w := window.Window{Start: row[k].(int64), End: row[k+1].(int64)}
		out.Rows[i] = append(row[:k:k], row[k+2:]...)
		out.Windows[i] = [2]int64{w.Start, w.End}
		out.Time[i] = time.Unix(0, w.MaxTimestamp()).UTC()
		out.Pos[i] = schemas.Position{Source: source, Offset: w.End / int64(time.Millisecond)}
	}
	return out
}

// usingColumn reads a column of JOIN ... USING by its bare name, as Calcite does: the value
// of the first table that has it (not padded by an outer join), which all share when joined.
func (s *inputScope) usingColumn(n *ast.ColumnNameExpr) (node, bool) {
	if n.Name.Table.O != "" || n.Name.Schema.O != "" {
		return node{}, false
	}
	fields, ok := s.using[strings.ToLower(n.Name.Name.O)]
	if !ok {
		return node{}, false
	}
	reads := make([]node, len(fields))
	for i, f := range fields {
		reads[i] = readField(s.joined[f.Input].offset+f.Index, s.fieldOf(f))
	}
	t, _ := unify(reads[0].typ, reads[len(reads)-1].typ)
	return node{typ: t, null: true, eval: func(r schemas.Row) (any, error) {
		for _, read := range reads {
			if v, _ := read.eval(r); v != nil {
				return widen(t, v), nil
			}
		}
		return nil, nil
	}}, true
}
