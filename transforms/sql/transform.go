package sql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/combine"
	"github.com/sluicehq/sluice/transforms/expr"
	"github.com/sluicehq/sluice/transforms/join"
	"github.com/sluicehq/sluice/transforms/window"
)

// Config is the config of Sql, as Beam YAML writes it.
type Config struct {
	Query         component.Expr           `yaml:"query" required:"true" doc:"A SELECT over the input, which the query calls PCOLLECTION (or over several inputs by their names, joined with [INNER|LEFT|RIGHT|FULL] JOIN ... ON equal columns): expressions, WHERE, DISTINCT, GROUP BY with COUNT, SUM, AVG, MIN, MAX, COUNTIF (COUNT(DISTINCT)), HAVING, CASE, CAST, Calcite's common functions, and TUMBLE, HOP or SESSION windows in GROUP BY."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"sluice adds: rows (and groups, and joined rows) whose WHERE, keys, aggregate arguments, HAVING or SELECT list fail go to this output instead of stopping the pipeline."`
}

func init() {
	component.RegisterTransform("Sql",
		"Runs a SQL query (Calcite's dialect, as Beam SQL) over the input PCOLLECTION or over joins of named inputs: a filter and projection, or a grouping with aggregates over windows.",
		component.Inputs{Min: 1, Max: -1}, build)
}

func build(ctx *component.Context, cfg *Config) (component.Transform, error) {
	for _, in := range ctx.Inputs {
		if in.Schema == nil {
			return nil, nil // the input's problems are reported
		}
	}
	src := &source{e: cfg.Query, lines: ctx.Lines}
	stmt, err := src.parse()
	if err != nil {
		ctx.Diags.Append(cfg.Query.Pos, err)
		return nil, nil
	}
	c := &compiler{src: src, now: nowUTC}
	plan := func(names []string, ins []*schemas.Schema, steps []join.Step) *join.Plan {
		return join.NewPlan(ctx, names, ins, steps)
	}
	q := compileQuery(c, stmt, ctx.Inputs, plan)
	if q != nil && q.group != nil {
		q.checkWindowing(ctx)
	}
	if len(c.diags) > 0 || q == nil {
		*ctx.Diags = append(*ctx.Diags, c.diags...)
		return nil, nil
	}
	if q.join != nil && q.group != nil {
		return newJoinGrouped(ctx, cfg, q), nil
	}
	if q.join != nil {
		return newJoined(ctx, cfg, q), nil
	}
	in := q.input.in
	errs := ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	pre := &stage{who: ctx.Describe(), time: -1, errors: errs}
	if q.group == nil {
		pre.compile(cfg.Query, in, q.where, q.items, nil)
		pre.out = q.out
		ctx.Output(component.Main, q.out)
		return pre, nil
	}
	return newGrouped(ctx, cfg.Query, q, pre), nil
}

// checkWindowing refuses a window in GROUP BY on a transform that also has `windowing:`.
func (q *query) checkWindowing(ctx *component.Context) {
	if q.group.win == nil {
		return
	}
	if spec := window.InEffect(ctx); spec.Type != "global" {
		q.c.errorf(q.sel, "GROUP BY %s and the transform's windowing (%s) both set the windows; keep one", strings.ToUpper(q.group.win.kind), spec.Type)
	}
}

// stage filters rows by WHERE and computes new rows from them, through expr.Evaluator as
// MapToFields and Filter do; failures go to the error output.
type stage struct {
	who string
	out *schemas.Schema
	projection
	time   int // the program whose TIMESTAMP is a row's event time, or -1
	errors *component.ErrorOutput
}

// projection is a condition (WHERE, HAVING; program 0 when cond) and the programs of the
// output's n fields, over the rows bound to a scope of ev.
type projection struct {
	ev   *expr.Evaluator
	cond bool
	n    int
}

// newProjection compiles cond (or nil) and items over rows of in into programs, extra
// after them.
func newProjection(q component.Expr, in *schemas.Schema, cond *node, items []node, extra ...node) projection {
	var progs []*expr.Program
	if cond != nil {
		progs = append(progs, program(q, truth(*cond), in))
	}
	for _, n := range append(items, extra...) {
		progs = append(progs, program(q, n, in))
	}
	return projection{ev: expr.NewEvaluator(in, progs...), cond: cond != nil, n: len(items)}
}

// eval computes the output row of the bound row, or nil when the condition is not TRUE.
func (p *projection) eval(sc *expr.Scope) (schemas.Row, error) {
	first := 0
	if p.cond {
		keep, err := sc.Eval(0)
		if err != nil || keep != true {
			return nil, err
		}
		first = 1
	}
	out := make(schemas.Row, p.n)
	for j := range out {
		v, err := sc.Eval(first + j)
		if err != nil {
			return nil, err
		}
		out[j] = v
	}
	return out, nil
}

// extra is the index of the program given after the items.
func (p *projection) extra(i int) int {
	if p.cond {
		return 1 + p.n + i
	}
	return p.n + i
}

// compile compiles the stage's programs: WHERE, the items, and the event time.
func (s *stage) compile(q component.Expr, in *schemas.Schema, where *node, items []node, ts *node) {
	if ts == nil {
		s.projection = newProjection(q, in, where, items)
		return
	}
	s.projection = newProjection(q, in, where, items, *ts)
	s.time = s.extra(0)
}

func (s *stage) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out, errs, err := s.apply(in)
	if err != nil {
		return err
	}
	return emitResult(emit, out, errs, s.errors)
}

// emitResult emits a query's rows, if any, on the main output and the rows that failed on
// the error output.
func emitResult(emit component.Emit, out, errs *schemas.Batch, errors *component.ErrorOutput) error {
	if len(out.Rows) > 0 {
		if err := emit(component.Main, out); err != nil {
			return err
		}
	}
	return errors.Emit(errs, emit)
}

// apply filters and computes the rows of in; errs holds the rows that failed, for the
// error output.
func (s *stage) apply(in *schemas.Batch) (out, errs *schemas.Batch, err error) {
	out = &schemas.Batch{Schema: s.out, Rows: make([]schemas.Row, 0, len(in.Rows))}
	if in.Pos != nil {
		out.Pos = make([]schemas.Position, 0, len(in.Rows))
	}
	if in.Time != nil || s.time >= 0 {
		out.Time = make([]time.Time, 0, len(in.Rows))
	}
	if in.Windows != nil { // rows a join fired keep their windows
		out.Windows = make([][2]int64, 0, len(in.Rows))
	}
	sc := s.ev.Scope()
	defer sc.Release()
	for i, row := range in.Rows {
		sc.Bind(row)
		r, t, fail := s.row(sc)
		if fail != nil {
			if errs, err = s.errors.Add(errs, in, i, fmt.Errorf("%s: %w", s.who, fail)); err != nil {
				return nil, nil, err
			}
			continue
		}
		if r == nil {
			continue
		}
		out.Rows = append(out.Rows, r)
		if out.Pos != nil && i < len(in.Pos) {
			out.Pos = append(out.Pos, in.Pos[i])
		}
		if out.Windows != nil && i < len(in.Windows) {
			out.Windows = append(out.Windows, in.Windows[i])
		}
		switch {
		case s.time >= 0:
			out.Time = append(out.Time, t)
		case out.Time != nil && i < len(in.Time):
			out.Time = append(out.Time, in.Time[i])
		}
	}
	return out, errs, nil
}

// row computes one output row, or nil when WHERE drops it, with its event time.
func (s *stage) row(sc *expr.Scope) (schemas.Row, time.Time, error) {
	out, err := s.eval(sc)
	if out == nil || err != nil || s.time < 0 {
		return out, time.Time{}, err
	}
	v, err := sc.Eval(s.time)
	if err != nil {
		return nil, time.Time{}, err
	}
	ts, ok := v.(time.Time)
	if !ok {
		return nil, time.Time{}, fmt.Errorf("the window's timestamp column is null")
	}
	return out, ts, nil
}

// grouped is a grouped query: the stage before the grouping, Combine's stateful transform,
// and HAVING and the SELECT list over what it fires.
type grouped struct {
	component.Stateful
	pre  *stage
	post projection // HAVING and the SELECT list
	out  *schemas.Schema
	who  string
	keys []string // the grouped expressions' text, for messages
}

func newGrouped(ctx *component.Context, q component.Expr, qu *query, pre *stage) *grouped {
	g := qu.group
	plan, items, _ := g.plan(ctx.Describe(), q, false)
	var ts *node
	fn, lateness := window.InEffect(ctx).Fn(), time.Duration(window.InEffect(ctx).AllowedLateness)
	if g.win != nil {
		ts, fn = &g.win.ts, g.win.fn
	}
	pre.compile(q, qu.input.in, qu.where, items, ts)
	pre.out = g.mid
	return newPost(ctx, q, g, plan.Out.Fields, pre, combine.NewStatefulOver(ctx, plan, fn, lateness))
}

// plan returns the Combine plan of the grouping over its mid rows (the keys, then the
// aggregates' arguments; with windowKeys then the bounds of each row's window in Unix
// nanoseconds, two more keys) and the items pre computes the keys and arguments with.
func (g *grouping) plan(who string, q component.Expr, windowKeys bool) (*combine.Plan, []node, *schemas.Schema) {
	mid := g.mid
	keys := make([]int, len(g.keys))
	items := append([]node{}, g.keys...)
	for i := range keys {
		keys[i] = i
	}
	if windowKeys {
		n := len(mid.Fields)
		mid = schemas.New(append(append([]schemas.Field{}, mid.Fields...),
			schemas.Field{Name: "$window_start", Type: tInt}, schemas.Field{Name: "$window_end", Type: tInt})...)
		keys = append(keys, n, n+1)
	}
	aggs := make([]combine.Agg, len(g.aggs))
	names := make([]string, len(g.aggs))
	values := make([]*expr.Program, len(g.aggs))
	for j, a := range g.aggs {
		items = append(items, a.arg)
		aggs[j] = combine.Agg{Fn: a.fn, In: a.arg.typ, Nullable: a.arg.null}
		names[j] = a.text
		values[j] = program(q, readField(len(g.keys)+j, mid.Fields[len(g.keys)+j]), mid)
	}
	return combine.NewPlan(who, mid, keys, aggs, names, values), items, mid
}

// newPost returns the grouped transform of state: HAVING and the SELECT list over the
// combined rows (the keys and the aggregates, fields) and their window's bounds.
func newPost(ctx *component.Context, q component.Expr, g *grouping, fields []schemas.Field, pre *stage, state component.Stateful) *grouped {
	fields = append(append([]schemas.Field{}, fields...),
		schemas.Field{Name: "$window_start", Type: tTime}, schemas.Field{Name: "$window_end", Type: tTime})
	gr := &grouped{Stateful: state, pre: pre, out: g.out, who: ctx.Describe(), keys: g.texts,
		post: newProjection(q, schemas.New(fields...), g.having, g.post)}
	ctx.Output(component.Main, g.out)
	return gr
}

// Process computes the keys and arguments of the batch's rows and adds them to the state.
func (g *grouped) Process(ctx context.Context, lane int, in *schemas.Batch, emit component.Emit) error {
	mid, errs, err := g.pre.apply(in)
	if err != nil {
		return err
	}
	if len(mid.Rows) > 0 {
		if mid.Time == nil {
			return fmt.Errorf("%s: the rows have no event time", g.who)
		}
		if err := g.Stateful.Process(ctx, lane, mid, emit); err != nil {
			return err
		}
	}
	return g.pre.errors.Emit(errs, emit)
}

// Fire fires the windows the watermark closed and turns their results into the query's rows.
func (g *grouped) Fire(ctx context.Context, upstream schemas.Offsets, final bool, emit component.Emit) error {
	return g.Stateful.Fire(ctx, upstream, final, func(tag string, b *schemas.Batch) error {
		if tag != component.Main {
			return emit(tag, b)
		}
		out, errs, err := g.finish(b)
		if err != nil {
			return err
		}
		return emitResult(emit, out, errs, g.pre.errors)
	})
}

// finish applies HAVING and the SELECT list to combined rows; a group whose row fails goes
// to the error output (as an error without an element: the group is no input row), or
// stops the pipeline without one.
func (g *grouped) finish(b *schemas.Batch) (out, errs *schemas.Batch, err error) {
	out = &schemas.Batch{Schema: g.out}
	sc := g.post.ev.Scope()
	defer sc.Release()
	for i, row := range b.Rows {
		full := make(schemas.Row, len(row), len(row)+2)
		copy(full, row)
		var start, end time.Time
		if i < len(b.Windows) {
			start, end = windowBounds(b.Windows[i])
		}
		sc.Bind(append(full, start, end))
		r, fail := g.post.eval(sc)
		if fail != nil {
			fail = fmt.Errorf("%s: %w (in the group %s)", g.who, fail, g.describe(row, b, i))
			if errs, err = g.pre.errors.Add(errs, &schemas.Batch{Pos: b.Pos, Time: b.Time}, i, fail); err != nil {
				return nil, nil, err
			}
			continue
		}
		if r == nil {
			continue
		}
		out.Rows = append(out.Rows, r)
		if i < len(b.Pos) {
			out.Pos = append(out.Pos, b.Pos[i])
		}
		if i < len(b.Time) {
			out.Time = append(out.Time, b.Time[i])
		}
		if i < len(b.Windows) {
			out.Windows = append(out.Windows, b.Windows[i])
		}
	}
	return out, errs, nil
}

// describe names a combined row's group for a message: its keys and its window.
func (g *grouped) describe(row schemas.Row, b *schemas.Batch, i int) string {
	var parts []string
	for k, text := range g.keys {
		parts = append(parts, strings.ReplaceAll(text, "`", "")+" = "+schemas.Literal(row[k]))
	}
	if i < len(b.Windows) {
		if start, end := windowBounds(b.Windows[i]); !start.IsZero() {
			parts = append(parts, fmt.Sprintf("window [%s, %s)", start.Format(time.RFC3339), end.Format(time.RFC3339)))
		}
	}
	if len(parts) == 0 {
		return "of all rows"
	}
	return strings.Join(parts, ", ")
}

// windowBounds returns a window's start and end as timestamps (the global window's are the
// zero time).
func windowBounds(w [2]int64) (time.Time, time.Time) {
	win := window.Window{Start: w[0], End: w[1]}
	if win.IsGlobal() {
		return time.Time{}, time.Time{}
	}
	return win.StartTime(), win.EndTime()
}
