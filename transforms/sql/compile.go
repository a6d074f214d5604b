package sql

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// node is a compiled expression: its static type, whether it can be null, and how to
// compute it from a row. A null is nil. Rows hold int64, float64, string, bool and
// time.Time for the SQL types BIGINT, DOUBLE, VARCHAR, BOOLEAN and TIMESTAMP; other kinds
// pass through unchanged.
type node struct {
	typ  schemas.Type
	null bool
	eval func(r schemas.Row) (any, error)
	// interval is set for an INTERVAL literal (eval gives a time.Duration, or months for
	// MONTH and YEAR); only window
	// functions and timestamp arithmetic take one.
	interval bool
	at       ast.ExprNode // for runtime errors' positions
}

var (
	tInt    = schemas.Type{Kind: schemas.Int64}
	tFloat  = schemas.Type{Kind: schemas.Float64}
	tString = schemas.Type{Kind: schemas.String}
	tBool   = schemas.Type{Kind: schemas.Bool}
	tTime   = schemas.Type{Kind: schemas.Timestamp}
	tAny    = schemas.Type{}
)

// sqlName is the SQL name of a type, for messages.
func sqlName(t schemas.Type) string {
	switch t.Kind {
	case schemas.Int64:
		return "BIGINT"
	case schemas.Float64:
		return "DOUBLE"
	case schemas.String:
		return "VARCHAR"
	case schemas.Bool:
		return "BOOLEAN"
	case schemas.Timestamp:
		return "TIMESTAMP"
	case schemas.Any:
		return "NULL"
	}
	return strings.ToUpper(t.String())
}

// scope resolves the names an expression reads: the input's columns, or in a grouped
// query's output the keys, aggregates and window bounds.
type scope interface {
	// column resolves a column reference; ok is false when it is reported.
	column(c *compiler, n *ast.ColumnNameExpr) (node, bool)
	// special compiles what only this scope has (aggregates, grouped expressions, window
	// bounds): handled is false for an expression the compiler compiles as usual.
	special(c *compiler, e ast.ExprNode) (n node, handled, ok bool)
}

// compiler compiles the expressions of one query or expression, collecting every problem.
type compiler struct {
	src   *source
	diags diag.List
	scope scope
	// now is CURRENT_TIMESTAMP's clock.
	now func() time.Time
}

func (c *compiler) errorf(at ast.Node, format string, args ...any) *diag.Diagnostic {
	return c.diags.Add(c.src.at(at), format, args...)
}

// rowError is a failure computing e for a row, at e's place in the file.
func (c *compiler) rowError(e ast.ExprNode, format string, args ...any) error {
	return &expr.Error{Pos: c.src.at(e), Msg: fmt.Sprintf(format, args...)}
}

// expr compiles e; ok is false when a problem was reported.
func (c *compiler) expr(e ast.ExprNode) (node, bool) {
	if n, handled, ok := c.scope.special(c, e); handled {
		n.at = e
		return n, ok
	}
	n, ok := c.compileExpr(e)
	n.at = e
	return n, ok
}

func (c *compiler) compileExpr(e ast.ExprNode) (node, bool) {
	switch e := e.(type) {
	case *ast.ParenthesesExpr:
		return c.expr(e.Expr)
	case *ast.ColumnNameExpr:
		return c.scope.column(c, e)
	case *test_driver.ValueExpr:
		return c.literal(e)
	case *ast.BinaryOperationExpr:
		return c.binary(e)
	case *ast.UnaryOperationExpr:
		return c.unary(e)
	case *ast.IsNullExpr:
		x, ok := c.expr(e.Expr)
		not := e.Not
		return node{typ: tBool, eval: func(r schemas.Row) (any, error) {
			v, err := x.eval(r)
			return (v == nil) != not, err
		}}, ok
	case *ast.IsTruthExpr:
		x, ok := c.boolean(e.Expr, "IS TRUE")
		want, not := e.True == 1, e.Not
		return node{typ: tBool, eval: func(r schemas.Row) (any, error) {
			v, err := x.eval(r)
			return (v == want) != not, err
		}}, ok
	case *ast.CaseExpr:
		return c.caseExpr(e)
	case *ast.PatternInExpr:
		return c.in(e)
	case *ast.BetweenExpr:
		return c.between(e)
	case *ast.PatternLikeOrIlikeExpr:
		return c.like(e)
	case *ast.FuncCallExpr:
		return c.call(e)
	case *ast.AggregateFuncExpr:
		c.errorf(e, "the aggregate function %s needs the Sql transform with GROUP BY (or over all rows of a window)", strings.ToUpper(e.F)).
			Detail = "language sql expressions in MapToFields and Filter compute one row at a time"
		return node{}, false
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		c.errorf(e, "subqueries are not supported")
		return node{}, false
	case *ast.FuncCastExpr:
		c.errorf(e, "CAST to this type is not supported").Detail = "sluice casts to VARCHAR, BIGINT (INTEGER, INT, SMALLINT, TINYINT), DOUBLE (FLOAT, REAL, DECIMAL), BOOLEAN and TIMESTAMP"
		return node{}, false
	}
	c.errorf(e, "this SQL construct is not supported: %s", restore(e))
	return node{}, false
}

// restore returns e's text as the parser understood it, for messages and to match a select
// item with a GROUP BY expression.
func restore(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(newRestoreCtx(&b)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return b.String()
}

func (c *compiler) literal(e *test_driver.ValueExpr) (node, bool) {
	var v any
	var t schemas.Type
	switch x := e.GetValue().(type) {
	case nil:
		return node{typ: tAny, null: true, eval: func(schemas.Row) (any, error) { return nil, nil }}, true
	case int64:
		v, t = x, tInt
	case uint64:
		v, t = float64(x), tFloat
	case float64:
		v, t = x, tFloat
	case string:
		v, t = x, tString
	case *test_driver.MyDecimal:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			c.errorf(e, "cannot read the number %s", x.String())
			return node{}, false
		}
		v, t = f, tFloat
	default:
		c.errorf(e, "this literal is not supported: %s", restore(e))
		return node{}, false
	}
	return constant(t, v), true
}

func constant(t schemas.Type, v any) node {
	return node{typ: t, eval: func(schemas.Row) (any, error) { return v, nil }}
}

// boolean compiles e and checks that it is a BOOLEAN.
func (c *compiler) boolean(e ast.ExprNode, what string) (node, bool) {
	x, ok := c.expr(e)
	if ok && x.typ.Kind != schemas.Bool && x.typ.Kind != schemas.Any {
		c.errorf(e, "%s needs a BOOLEAN, but %s is %s", what, restore(e), sqlName(x.typ))
		return x, false
	}
	return x, ok
}

func (c *compiler) unary(e *ast.UnaryOperationExpr) (node, bool) {
	switch e.Op {
	case opcode.Not, opcode.Not2:
		x, ok := c.boolean(e.V, "NOT")
		return node{typ: tBool, null: x.null, eval: func(r schemas.Row) (any, error) {
			v, err := x.eval(r)
			if v == nil || err != nil {
				return nil, err
			}
			return !v.(bool), nil
		}}, ok
	case opcode.Minus:
		x, ok := c.expr(e.V)
		if !ok {
			return x, false
		}
		if !isNumber(x.typ) {
			c.errorf(e, "- needs a number, but %s is %s", restore(e.V), sqlName(x.typ))
			return x, false
		}
		return node{typ: x.typ, null: x.null, eval: func(r schemas.Row) (any, error) {
			v, err := x.eval(r)
			switch v := v.(type) {
			case int64:
				return -v, err
			case float64:
				return -v, err
			}
			return nil, err
		}}, true
	case opcode.Plus:
		return c.expr(e.V)
	}
	c.errorf(e, "the operator %s is not supported", e.Op)
	return node{}, false
}

// opSymbol is how SQL writes an arithmetic operator.
func opSymbol(op opcode.Op) string {
	switch op {
	case opcode.Plus:
		return "+"
	case opcode.Minus:
		return "-"
	case opcode.Mul:
		return "*"
	case opcode.Div:
		return "/"
	case opcode.Mod:
		return "%"
	}
	return strings.ToUpper(op.String())
}

func isNumber(t schemas.Type) bool {
	return t.Kind == schemas.Int64 || t.Kind == schemas.Float64 || t.Kind == schemas.Any
}

// numeric is the type of arithmetic on a and b: BIGINT when both are, else DOUBLE.
func numeric(a, b schemas.Type) schemas.Type {
	if a.Kind == schemas.Int64 && b.Kind == schemas.Int64 {
		return tInt
	}
	if a.Kind == schemas.Any && b.Kind == schemas.Any {
		return tAny
	}
	if a.Kind == schemas.Any {
		return b
	}
	if b.Kind == schemas.Any {
		return a
	}
	return tFloat
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

func (c *compiler) binary(e *ast.BinaryOperationExpr) (node, bool) {
	l, okL := c.expr(e.L)
	r, okR := c.expr(e.R)
	if !okL || !okR {
		return node{}, false
	}
	switch e.Op {
	case opcode.LogicAnd, opcode.LogicOr:
		return c.logic(e, l, r)
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
		return c.compare(e, l, r)
	case opcode.Plus, opcode.Minus:
		if l.typ.Kind == schemas.Timestamp && r.interval {
			return c.shiftTime(e, l, r)
		}
		return c.arith(e, l, r)
	case opcode.Mul, opcode.Div, opcode.Mod, opcode.IntDiv:
		return c.arith(e, l, r)
	}
	c.errorf(e, "the operator %s is not supported", e.Op)
	return node{}, false
}

func (c *compiler) logic(e *ast.BinaryOperationExpr, l, r node) (node, bool) {
	for _, x := range []struct {
		n node
		e ast.ExprNode
	}{{l, e.L}, {r, e.R}} {
		if x.n.typ.Kind != schemas.Bool && x.n.typ.Kind != schemas.Any {
			c.errorf(x.e, "%s needs BOOLEANs, but %s is %s", strings.ToUpper(e.Op.String()), restore(x.e), sqlName(x.n.typ))
			return node{}, false
		}
	}
	and := e.Op == opcode.LogicAnd
	// SQL's three-valued logic: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE.
	return node{typ: tBool, null: l.null || r.null, eval: func(row schemas.Row) (any, error) {
		a, err := l.eval(row)
		if err != nil {
			return nil, err
		}
		if a == !and {
			return a, nil
		}
		b, err := r.eval(row)
		if err != nil {
			return nil, err
		}
		switch {
		case b == !and:
			return b, nil
		case a == nil || b == nil:
			return nil, nil
		}
		return and, nil
	}}, true
}

// operands computes the operands of a strict operator: both, or a nil when either is null.
func operands(l, r node, row schemas.Row) (a, b any, err error) {
	if a, err = l.eval(row); a == nil || err != nil {
		return nil, nil, err
	}
	if b, err = r.eval(row); b == nil || err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// comparable reports whether SQL compares values of a and b.
func comparable(a, b schemas.Type) bool {
	if a.Kind == schemas.Any || b.Kind == schemas.Any {
		return true
	}
	if isNumber(a) && isNumber(b) {
		return true
	}
	return a.Kind == b.Kind && a.Kind != schemas.Struct && a.Kind != schemas.Array && a.Kind != schemas.Map
}

func (c *compiler) compare(e *ast.BinaryOperationExpr, l, r node) (node, bool) {
	if !comparable(l.typ, r.typ) {
		c.errorf(e, "cannot compare %s with %s in %s", sqlName(l.typ), sqlName(r.typ), restore(e)).
			Detail = "CAST one side, e.g. CAST(x AS VARCHAR)"
		return node{}, false
	}
	op := e.Op
	return node{typ: tBool, null: l.null || r.null, eval: func(row schemas.Row) (any, error) {
		a, b, err := operands(l, r, row)
		if a == nil || b == nil || err != nil {
			return nil, err
		}
		d, err := compareValues(a, b)
		if err != nil {
			return nil, c.rowError(e, "%v", err)
		}
		switch op {
		case opcode.EQ:
			return d == 0, nil
		case opcode.NE:
			return d != 0, nil
		case opcode.LT:
			return d < 0, nil
		case opcode.LE:
			return d <= 0, nil
		case opcode.GT:
			return d > 0, nil
		}
		return d >= 0, nil
	}}, true
}

// compareValues orders two non-null values of comparable types.
func compareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), nil
		}
		if y, ok := b.(float64); ok {
			return cmp.Compare(float64(x), y), nil
		}
	case float64:
		if _, ok := b.(int64); ok {
			return cmp.Compare(x, toFloat(b)), nil
		}
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(b2i(x), b2i(y)), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case *big.Rat:
		if y, ok := b.(*big.Rat); ok {
			return x.Cmp(y), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %s with %s", schemas.Describe(a), schemas.Describe(b))
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (c *compiler) arith(e *ast.BinaryOperationExpr, l, r node) (node, bool) {
	if !isNumber(l.typ) || !isNumber(r.typ) {
		c.errorf(e, "%s needs numbers, but %s is %s and %s is %s", opSymbol(e.Op), restore(e.L), sqlName(l.typ), restore(e.R), sqlName(r.typ)).
			Detail = "|| joins strings"
		return node{}, false
	}
	t := numeric(l.typ, r.typ)
	op := e.Op
	return node{typ: t, null: l.null || r.null, eval: func(row schemas.Row) (any, error) {
		a, b, err := operands(l, r, row)
		if a == nil || b == nil || err != nil {
			return nil, err
		}
		x, xi := a.(int64)
		y, yi := b.(int64)
		if xi && yi {
			v, ok := apply(op, x, y, func(x, y int64) int64 { return x % y }) // integer division truncates, as Calcite's
			if !ok {
				return nil, c.rowError(e, "division by zero")
			}
			return v, nil
		}
		v, ok := apply(op, toFloat(a), toFloat(b), math.Mod)
		if !ok {
			return nil, c.rowError(e, "division by zero")
		}
		return v, nil
	}}, true
}

// apply computes x op y; ok is false for a division by zero.
func apply[T int64 | float64](op opcode.Op, x, y T, mod func(T, T) T) (v T, ok bool) {
	switch op {
	case opcode.Plus:
		return x + y, true
	case opcode.Minus:
		return x - y, true
	case opcode.Mul:
		return x * y, true
	}
	if y == 0 {
		return 0, false
	}
	if op == opcode.Mod {
		return mod(x, y), true
	}
	return x / y, true
}

// shiftTime is a TIMESTAMP plus or minus an INTERVAL.
func (c *compiler) shiftTime(e *ast.BinaryOperationExpr, l, r node) (node, bool) {
	sign := 1
	if e.Op == opcode.Minus {
		sign = -1
	}
	return node{typ: tTime, null: l.null, eval: func(row schemas.Row) (any, error) {
		a, err := l.eval(row)
		if a == nil || err != nil {
			return nil, err
		}
		d, _ := r.eval(row)
		return shift(a.(time.Time), d, sign), nil
	}}, true
}

// unify is the type of values of types a and b side by side (CASE branches, COALESCE).
func unify(a, b schemas.Type) (schemas.Type, bool) {
	switch {
	case a.Kind == schemas.Any:
		return b, true
	case b.Kind == schemas.Any:
		return a, true
	case a.Equal(b):
		return a, true
	case isNumber(a) && isNumber(b):
		return tFloat, true
	}
	return a, false
}

// widen converts an integer result to a DOUBLE one where the unified type says so.
func widen(t schemas.Type, v any) any {
	if i, ok := v.(int64); ok && t.Kind == schemas.Float64 {
		return float64(i)
	}
	return v
}

func (c *compiler) caseExpr(e *ast.CaseExpr) (node, bool) {
	ok := true
	var value node
	if e.Value != nil {
		value, ok = c.expr(e.Value)
	}
	type branch struct{ when, then node }
	branches := make([]branch, len(e.WhenClauses))
	t, null := tAny, e.ElseClause == nil
	for i, w := range e.WhenClauses {
		var when node
		var good bool
		if e.Value != nil {
			when, good = c.expr(w.Expr)
			if good && ok && !comparable(value.typ, when.typ) {
				c.errorf(w.Expr, "cannot compare %s with %s in CASE", sqlName(value.typ), sqlName(when.typ))
				good = false
			}
		} else {
			when, good = c.boolean(w.Expr, "WHEN")
		}
		then, goodThen := c.expr(w.Result)
		ok = ok && good && goodThen
		if goodThen {
			var same bool
			if t, same = unify(t, then.typ); !same {
				c.errorf(w.Result, "the CASE branches have different types: %s and %s", sqlName(t), sqlName(then.typ))
				ok = false
			}
			null = null || then.null
		}
		branches[i] = branch{when, then}
	}
	var els node
	if e.ElseClause != nil {
		var good bool
		if els, good = c.expr(e.ElseClause); good {
			var same bool
			if t, same = unify(t, els.typ); !same {
				c.errorf(e.ElseClause, "the CASE branches have different types: %s and %s", sqlName(t), sqlName(els.typ))
				good = false
			}
			null = null || els.null
		}
		ok = ok && good
	}
	if !ok {
		return node{}, false
	}
	simple := e.Value != nil
	return node{typ: t, null: null, eval: func(row schemas.Row) (any, error) {
		var v any
		if simple {
			var err error
			if v, err = value.eval(row); err != nil {
				return nil, err
			}
		}
		for _, b := range branches {
			w, err := b.when.eval(row)
			if err != nil {
				return nil, err
			}
			hit := w == true
			if simple {
				hit = false
				if v != nil && w != nil {
					d, err := compareValues(v, w)
					hit = err == nil && d == 0
				}
			}
			if hit {
				out, err := b.then.eval(row)
				return widen(t, out), err
			}
		}
		if els.eval == nil {
			return nil, nil
		}
		out, err := els.eval(row)
		return widen(t, out), err
	}}, true
}

func (c *compiler) in(e *ast.PatternInExpr) (node, bool) {
	if e.Sel != nil {
		c.errorf(e, "IN with a subquery is not supported")
		return node{}, false
	}
	x, ok := c.expr(e.Expr)
	list := make([]node, len(e.List))
	for i, item := range e.List {
		n, good := c.expr(item)
		if good && ok && !comparable(x.typ, n.typ) {
			c.errorf(item, "cannot compare %s with %s in IN", sqlName(x.typ), sqlName(n.typ))
			good = false
		}
		ok = ok && good
		list[i] = n
	}
	not := e.Not
	return node{typ: tBool, null: true, eval: func(row schemas.Row) (any, error) {
		v, err := x.eval(row)
		if v == nil || err != nil {
			return nil, err
		}
		sawNull := false
		for _, n := range list {
			w, err := n.eval(row)
			if err != nil {
				return nil, err
			}
			if w == nil {
				sawNull = true
				continue
			}
			if d, err := compareValues(v, w); err == nil && d == 0 {
				return !not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return not, nil
	}}, ok
}

func (c *compiler) between(e *ast.BetweenExpr) (node, bool) {
	x, ok1 := c.expr(e.Expr)
	lo, ok2 := c.expr(e.Left)
	hi, ok3 := c.expr(e.Right)
	if !ok1 || !ok2 || !ok3 {
		return node{}, false
	}
	if !comparable(x.typ, lo.typ) || !comparable(x.typ, hi.typ) {
		c.errorf(e, "cannot compare %s with %s and %s in BETWEEN", sqlName(x.typ), sqlName(lo.typ), sqlName(hi.typ))
		return node{}, false
	}
	not := e.Not
	return node{typ: tBool, null: true, eval: func(row schemas.Row) (any, error) {
		var vals [3]any
		for i, n := range []node{x, lo, hi} {
			v, err := n.eval(row)
			if v == nil || err != nil {
				return nil, err
			}
			vals[i] = v
		}
		a, err := compareValues(vals[0], vals[1])
		if err != nil {
			return nil, c.rowError(e, "%v", err)
		}
		b, err := compareValues(vals[0], vals[2])
		if err != nil {
			return nil, c.rowError(e, "%v", err)
		}
		return (a >= 0 && b <= 0) != not, nil
	}}, true
}
