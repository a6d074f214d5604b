package combine

import (
	"errors"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// reducer is a Python function (a, b) -> value that Combine applies pairwise: the first
// value, then f(acc, v) for each next one, and f(acc, other) to merge partial results. It
// must be associative (f(f(a, b), c) == f(a, f(b, c))), or lanes, sessions and restarts
// may give different results; sluice cannot check that.
type reducer struct {
	ev *expr.Evaluator
}

// pairSchema is the schema the function is compiled against: two values of type t.
func pairSchema(t schemas.Type) *schemas.Schema {
	return schemas.New(schemas.Field{Name: "a", Type: t, Nullable: true}, schemas.Field{Name: "b", Type: t, Nullable: true})
}

func newReducer(in *schemas.Schema, prog *expr.Program) *reducer {
	return &reducer{ev: expr.NewEvaluator(in, prog)}
}

func (r *reducer) call(a, b any) (any, error) {
	s := r.ev.Scope()
	defer s.Release()
	s.Bind(schemas.Row{a, b})
	return s.Eval(0)
}

// reduceAcc holds the combined value so far. Nulls are skipped; the result is null when
// every value was. Check calls the function and keeps its result for Add, so that a value
// the function fails on leaves the accumulator unchanged.
type reduceAcc struct {
	r       *reducer
	set     bool
	v       any
	pending any // the result of Check, for Add
}

func (a *reduceAcc) Check(v any) error {
	if v == nil || !a.set {
		a.pending = v
		return nil
	}
	out, err := a.r.call(a.v, v)
	if err == nil && out == nil {
		err = errNone
	}
	a.pending = out
	return err
}

var errNone = errors.New("the combine function returned None: it must return the combination of its two values")

func (a *reduceAcc) Add(v any) {
	switch {
	case v == nil:
		return
	case !a.set:
		a.set, a.v = true, v
	default:
		a.v = a.pending
	}
	a.pending = nil
}

func (a *reduceAcc) Merge(o Acc) error {
	x := o.(*reduceAcc)
	if !x.set {
		return nil
	}
	return merge(a, x.v)
}

func (a *reduceAcc) Result() any { return a.v }
func (a *reduceAcc) size() int   { return valueSize(a.v) }

func (a *reduceAcc) appendTo(b []byte) ([]byte, error) {
	if !a.set {
		return append(b, 0), nil
	}
	return appendValue(append(b, 1), a.v)
}

func (a *reduceAcc) readFrom(d *decoder) {
	if a.set = d.Byte() == 1; a.set {
		a.v = d.value()
	}
}
