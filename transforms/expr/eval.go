package expr

import (
	"errors"
	"fmt"
	"sync"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// Error is an expression that failed on a row: where the failing part stands in the
// pipeline file and why.
type Error struct {
	Pos diag.Pos
	Msg string
	// Err is the cause, e.g. ErrDivisionByZero.
	Err error
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Evaluator runs a fixed set of programs, compiled against one schema, over rows of that
// schema. It is safe for concurrent use: each caller takes a Scope, binds rows to it and
// releases it, so environments are reused without being shared.
type Evaluator struct {
	progs []*Program
	binds []binding
	pool  sync.Pool
}

// binding is a field the programs read through the environment.
type binding struct {
	index int
	name  string
	kind  schemas.Kind
}

// NewEvaluator returns an evaluator of progs, which must have been compiled against the
// same schema in.
func NewEvaluator(in *schemas.Schema, progs ...*Program) *Evaluator {
	e := &Evaluator{progs: progs}
	seen := map[int]bool{}
	for _, p := range progs {
		if p.prog == nil {
			continue
		}
		for _, i := range p.used {
			if !seen[i] {
				seen[i] = true
				f := in.Fields[i]
				e.binds = append(e.binds, binding{index: i, name: f.Name, kind: f.Type.Kind})
			}
		}
	}
	e.pool.New = func() any {
		return &Scope{ev: e, env: make(map[string]any, len(e.binds))}
	}
	return e
}

// Scope is one caller's environment. It must not be used concurrently.
type Scope struct {
	ev  *Evaluator
	env map[string]any
	vm  vm.VM
	row schemas.Row
	// runners run the engine programs, by program index; made on first use.
	runners []Runner
}

// Scope returns a scope to evaluate rows with; Release it when done.
func (e *Evaluator) Scope() *Scope { return e.pool.Get().(*Scope) }

// Release returns the scope to its evaluator. The scope must not be used afterwards.
func (s *Scope) Release() {
	s.row = nil
	s.ev.pool.Put(s)
}

// Bind makes row the one the next evaluations read.
func (s *Scope) Bind(row schemas.Row) {
	s.row = row
	for _, b := range s.ev.binds {
		s.env[b.name] = bindValue(b.kind, row[b.index])
	}
}

// Eval runs program i (in the order given to NewEvaluator) on the bound row and returns its
// value in the row representation of the program's type. A failure is an *Error.
func (s *Scope) Eval(i int) (any, error) {
	p := s.ev.progs[i]
	var out any
	if p.prog == nil && p.dyn == nil {
		out = s.row[p.field]
	} else {
		v, err := s.run(i, p)
		if err != nil {
			return nil, err
		}
		if p.convert == nil {
			if out, err = normalize(v, p.typ.Kind); err != nil {
				return nil, p.errorAt(0, err.Error(), err)
			}
		} else {
			out = normalizeDeep(v)
		}
	}
	if p.convert != nil {
		v, err := schemas.Coerce(out, *p.convert, p.nullable)
		if err != nil {
			return nil, p.errorAt(0, fmt.Sprintf("cannot convert the result to %s: %v", p.convert, err), err)
		}
		out = v
	}
	if out == nil && !p.nullable {
		return nil, p.errorAt(0, "the expression returned null", nil)
	}
	return out, nil
}

// run runs program i, which computes its value, on the bound row.
func (s *Scope) run(i int, p *Program) (any, error) {
	if p.dyn != nil {
		return s.runner(i, p).Run(s.row)
	}
	v, err := s.vm.Run(p.prog, s.env)
	if err != nil {
		return nil, p.runtimeError(err)
	}
	return v, nil
}

// runner returns the scope's runner of program i, an engine's.
func (s *Scope) runner(i int, p *Program) Runner {
	if s.runners == nil {
		s.runners = make([]Runner, len(s.ev.progs))
	}
	if s.runners[i] == nil {
		s.runners[i] = p.dyn.NewRunner()
	}
	return s.runners[i]
}

func (p *Program) runtimeError(err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return p.errorAt(0, cleanMessage(err.Error()), err)
	}
	cause := fe.Unwrap()
	if cause == nil {
		cause = err
	}
	return p.errorAt(fe.From, cleanMessage(fe.Message), cause)
}

func (p *Program) errorAt(offset int, msg string, cause error) *Error {
	return &Error{Pos: filePos(p.src, p.lines, offset), Msg: msg, Err: cause}
}
