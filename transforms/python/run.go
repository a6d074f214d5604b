package python

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"go.starlark.net/starlark"
)

// program is a compiled transform's code: a frozen function, called by every lane with its
// own thread.
type program struct {
	kind     expr.SourceKind
	fn       starlark.Callable
	params   []param // expressions: the fields passed, in order
	typ      schemas.Type
	nullable bool
	c        *compilation // for positions of runtime errors
	shape    *shape       // callables: the row's
	truth    bool         // the result is converted to a boolean by Python's truthiness
}

// param is a field an expression reads, passed as an argument.
type param struct {
	index int
	shape *shape
}

func (p *program) Type() schemas.Type { return p.typ }
func (p *program) Nullable() bool     { return p.nullable }

// printToLog logs what a Python expression prints, at INFO in the run's log (as Beam's workers
// log a DoFn's print), rather than writing around it on stderr.
func printToLog(_ *starlark.Thread, msg string) { slog.Info(msg, "from", "python print") }

func (p *program) NewRunner() expr.Runner {
	thread := &starlark.Thread{Name: "row", Print: printToLog}
	thread.SetMaxExecutionSteps(rowSteps)
	n := len(p.params)
	if p.kind == expr.KindCallable || p.kind == expr.KindFile {
		n = 1
	}
	return &runner{p: p, thread: thread, args: make(starlark.Tuple, n), row: row{shape: p.shape}}
}

// runner calls the program for one lane.
type runner struct {
	p      *program
	thread *starlark.Thread
	args   starlark.Tuple
	// row is the callable's argument, rebound to each input row: nothing the call returns
	// refers to it once Run has converted the result (frozen globals cannot keep it).
	row row
}

func (r *runner) Run(in schemas.Row) (out any, err error) {
	p := r.p
	defer func() {
		// A bug in a builtin must fail the row, not the process.
		if v := recover(); v != nil {
			r.row.r = nil
			out, err = nil, &expr.Error{Pos: p.c.callPos(), Msg: fmt.Sprintf("SystemError: internal error: %v", v)}
		}
	}()
	if p.kind == expr.KindExpression || p.kind == expr.KindReduce {
		for i, a := range p.params {
			r.args[i] = value(a.shape, in[a.index])
		}
	} else {
		r.row.r = in
		r.args[0] = &r.row
	}
	r.thread.Steps = 0 // the bound is per row
	v, err := starlark.Call(r.thread, p.fn, r.args, nil)
	clear(r.args)
	r.row.r = nil
	if err != nil {
		e := p.c.rowError(err)
		if strings.Contains(err.Error(), "too many steps") {
			// The thread stays cancelled until told otherwise; the next row must run.
			r.thread.Uncancel()
			e.(*expr.Error).Msg = fmt.Sprintf("TimeoutError: the code did not end within %d Starlark steps for this row", rowSteps)
		}
		return nil, e
	}
	if p.truth {
		return bool(v.Truth()), nil
	}
	out, err = toGo(v)
	if err != nil {
		return nil, &expr.Error{Pos: p.c.callPos(), Msg: err.Error(), Err: err}
	}
	return out, nil
}

// callPos is where a result that cannot be stored is blamed: the start of the code.
func (c *compilation) callPos() diag.Pos { return c.posAt(0) }

// rowError turns a Starlark error into an *expr.Error at the innermost position inside the
// user's code, with Python's exception name.
func (c *compilation) rowError(err error) error {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return &expr.Error{Pos: c.callPos(), Msg: pythonMessage(err.Error()), Err: err}
	}
	pos := c.callPos()
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		if fp := ee.CallStack[i].Pos; fp.Filename() == filename && fp.Line > 0 {
			pos = c.locate(fp)
			break
		}
	}
	return &expr.Error{Pos: pos, Msg: pythonMessage(ee.Msg), Err: err}
}

// runError reports an error of the module's top level at build time.
func (c *compilation) runError(err error) {
	e := c.rowError(err).(*expr.Error)
	if strings.Contains(e.Msg, "too many steps") {
		e.Msg = fmt.Sprintf("TimeoutError: the top-level code did not end within %d Starlark steps", initSteps)
	}
	c.diags = append(c.diags, diag.Diagnostic{Pos: e.Pos, Summary: e.Msg})
}

// exceptionNames give Starlark's messages the name of the exception Python raises.
var exceptionNames = []struct {
	re   *regexp.Regexp
	name string
}{
	{regexp.MustCompile(`division by zero|modulo by zero`), "ZeroDivisionError"},
	{regexp.MustCompile(`key .* not in dict|not in dict`), "KeyError"},
	{regexp.MustCompile(`index out of range|out of range`), "IndexError"},
	{regexp.MustCompile(`has no \.\w+ (field or method|attribute)`), "AttributeError"},
	{regexp.MustCompile(`invalid literal|invalid syntax for|invalid argument|not a valid|ValueError`), "ValueError"},
	{regexp.MustCompile(`unsupported|unknown binary op|not iterable|not callable|got .* want|missing argument|unexpected keyword|for parameter|unhashable|not supported|not implemented|has no len`), "TypeError"},
}

// namedException finds a message that already names its exception, after the names of the
// builtins it went through ("re.sub: TypeError: ...").
var namedException = regexp.MustCompile(`\b([A-Z]\w*(Error|Exception)|re\.error): `)

// pythonMessage prefixes msg with Python's exception name when it has none.
func pythonMessage(msg string) string {
	if loc := namedException.FindStringIndex(msg); loc != nil {
		return msg[loc[0]:]
	}
	if f, ok := strings.CutPrefix(msg, "fail: "); ok {
		return "Exception: " + f
	}
	if strings.Contains(msg, "string value is not iterable") {
		msg += " (in sluice's Python strings are not iterable: write s.elems())"
	}
	for _, e := range exceptionNames {
		if e.re.MatchString(msg) {
			return e.name + ": " + msg
		}
	}
	return "Error: " + msg
}
