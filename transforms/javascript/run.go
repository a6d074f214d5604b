package javascript

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// program is a compiled transform's code. goja.Program is immutable and shared; runtimes
// are not, so lanes take one from the pool for each row.
type program struct {
	kind     expr.SourceKind
	prog     *goja.Program
	params   []param // expressions: the fields passed, in order
	typ      schemas.Type
	nullable bool
	c        *compilation // for positions of runtime errors
	shape    *shape       // callables: the row's
	truth    bool         // the result is converted to a boolean by JavaScript's truthiness
	lanes    sync.Pool    // of *lane
}

// param is a field an expression reads, passed as an argument.
type param struct {
	index int
	shape *shape
}

func (p *program) Type() schemas.Type { return p.typ }
func (p *program) Nullable() bool     { return p.nullable }

// lane is a runtime that has run the program's top-level code, with the function to call.
type lane struct {
	rt   *goja.Runtime
	fn   goja.Callable
	date goja.Value // the Date constructor
	args []goja.Value
	// row is the callable's argument, rebound to each input row: one object per lane, not
	// per call (the profile showed allocation and GC as most of a callable's cost).
	row    *rowObject
	rowVal goja.Value
	watch  *watchdog
}

// newLane makes a runtime and runs the program's top-level code on it; timeout, when not
// zero, bounds that code.
func (p *program) newLane(timeout time.Duration) (*lane, *expr.Error) {
	rt := goja.New()
	var timer *time.Timer
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { rt.Interrupt("timeout") })
	}
	v, err := rt.RunProgram(p.prog)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			return nil, &expr.Error{Pos: p.c.posAt(0), Msg: fmt.Sprintf("TimeoutError: the top-level code did not end within %s", timeout)}
		}
		return nil, p.c.rowError(err)
	}
	rt.ClearInterrupt() // the timer may have fired after the code ended
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &expr.Error{Pos: p.c.posAt(0), Msg: "TypeError: the code does not give a function"}
	}
	n := len(p.params)
	if p.kind != expr.KindExpression {
		n = 1
	}
	l := &lane{rt: rt, fn: fn, date: rt.Get("Date"), args: make([]goja.Value, n)}
	l.watch = newWatchdog(rt, rowTimeout)
	if p.kind != expr.KindExpression {
		l.row = &rowObject{lane: l, shape: p.shape}
		l.rowVal = rt.NewDynamicObject(l.row)
	}
	return l, nil
}

func (p *program) NewRunner() expr.Runner { return &runner{p: p} }

// runner runs the program for one caller, on a lane of the pool for each row: lanes are
// as many as the rows run at once, not as many as the callers.
type runner struct{ p *program }

func (r *runner) Run(in schemas.Row) (out any, err error) {
	p := r.p
	l, _ := p.lanes.Get().(*lane)
	if l == nil {
		var e *expr.Error
		if l, e = p.newLane(0); e != nil {
			return nil, e
		}
	}
	defer func() {
		// A bug in a conversion must fail the row, not the process.
		if v := recover(); v != nil {
			out, err = nil, &expr.Error{Pos: p.c.posAt(0), Msg: fmt.Sprintf("InternalError: %v", v)}
			return // the lane may be in any state: it is not reused
		}
		clear(l.args)
		if l.row != nil {
			l.row.r = nil
		}
		p.lanes.Put(l)
	}()
	if p.kind == expr.KindExpression {
		for i, a := range p.params {
			l.args[i] = value(a.shape, l, in[a.index])
		}
	} else {
		l.row.r = in
		l.args[0] = l.rowVal
	}
	l.watch.enter()
	v, err := l.fn(goja.Undefined(), l.args...)
	l.watch.exit()
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			return nil, &expr.Error{Pos: p.c.posAt(0), Msg: fmt.Sprintf("TimeoutError: the code did not end within %s for this row", l.watch.timeout)}
		}
		return nil, p.c.rowError(err)
	}
	if p.truth {
		return v.ToBoolean(), nil
	}
	out, err = toGo(v)
	if err != nil {
		return nil, &expr.Error{Pos: p.c.posAt(0), Msg: err.Error(), Err: err}
	}
	return out, nil
}

// rowError turns a JavaScript exception into an *expr.Error at the innermost position
// inside the user's code, with the exception's own message ("TypeError: ...").
func (c *compilation) rowError(err error) *expr.Error {
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		return &expr.Error{Pos: c.posAt(0), Msg: err.Error(), Err: err}
	}
	pos := c.posAt(0)
	for _, f := range ex.Stack() {
		if fp := f.Position(); f.SrcName() == filename && fp.Line > 0 {
			pos = c.posAt(c.offsetOf(fp.Line, fp.Column))
			break
		}
	}
	return &expr.Error{Pos: pos, Msg: exceptionMessage(ex), Err: err}
}

// exceptionMessage is what the code threw: an Error's "Name: message", or "Uncaught " and
// the value of anything else.
func exceptionMessage(ex *goja.Exception) string {
	v := ex.Value()
	if v == nil {
		return "Error: " + ex.Error()
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		return v.String()
	}
	return "Uncaught " + strings.TrimSpace(v.String())
}
