package expr

import (
	"strings"
	"sync"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// Engine compiles what expr-lang cannot evaluate with the same meaning. transforms/python
// registers one for language python (Starlark), so that this package keeps the fast path
// and does not depend on an interpreter.
type Engine interface {
	// Compile compiles src against the fields of in. Its errors are diagnostics (a
	// diag.Diagnostic, or a diag.List for several at once).
	Compile(src Source, in *schemas.Schema, o Options) (Dynamic, error)
}

// SourceKind says what a Source holds.
type SourceKind int

// The kinds of source: Beam's expression, callable, and path + name; and a combine
// function.
const (
	KindExpression SourceKind = iota // an expression over the fields
	KindCallable                     // a def or lambda taking the row
	KindFile                         // the function Name of the file at Path
	// KindReduce is a def or lambda of two values (a, b) returning one, which Combine applies
	// pairwise; the schema has two fields of the values' type and Run gets a row of the two.
	KindReduce
)

// Source is the code of an expression in any of Beam's forms.
type Source struct {
	Kind SourceKind
	// Expr is the text (for KindFile: the file's text, Pos at its first line).
	Expr component.Expr
	// Name is the function to call, for KindFile.
	Name string
}

// Dynamic is a program compiled by an Engine. It is immutable and shared by lanes; each
// caller runs it through its own Runner.
type Dynamic interface {
	Type() schemas.Type
	Nullable() bool
	NewRunner() Runner
}

// Runner runs a Dynamic program for one caller at a time. Run returns the result in the row
// representation (int64, float64, string, []any, map[string]any, time.Time, ...); a
// failure is an *Error.
type Runner interface {
	Run(row schemas.Row) (any, error)
}

var (
	enginesMu sync.RWMutex
	engines   = map[string]Engine{}
)

// RegisterEngine makes e the engine of language lang for what expr-lang does not cover.
func RegisterEngine(lang string, e Engine) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[strings.ToLower(lang)] = e
}

func engineFor(lang string) Engine {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	return engines[strings.ToLower(lang)]
}

// PosAt returns the file position of the rune at offset in e.Text, also inside folded and
// quoted scalars when lines (the pipeline file's) are given.
func PosAt(e component.Expr, lines []string, offset int) diag.Pos { return filePos(e, lines, offset) }

// compileDynamic compiles src with the language's engine into a Program.
func compileDynamic(eng Engine, src Source, in *schemas.Schema, o Options) (*Program, error) {
	d, err := eng.Compile(src, in, o)
	if err != nil {
		return nil, err
	}
	p := &Program{src: src.Expr, lines: o.Lines, field: -1, dyn: d, typ: d.Type(), nullable: d.Nullable(), convert: o.OutputType}
	if p.convert != nil {
		p.typ = *p.convert
	}
	return p, nil
}

// fallsBack reports whether a python expression that expr-lang refused with err is valid
// Python for the engine: a Python construct expr lacks, a syntax expr cannot parse, a
// function it does not know, or an operation whose Python meaning differs (and/or on
// values, `in` on strings, repetition, durations compared with numbers).
func fallsBack(err error) bool {
	if se, ok := err.(*sourceError); ok {
		return se.python
	}
	msg := err.Error()
	for _, s := range []string{"unexpected", "unknown name", "invalid operation: and", "invalid operation: or",
		"invalid operation: not", "invalid operation: in", "invalid operation: *", "time.Duration"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// pythonOnlyCalls are the builtins whose Python meaning differs from expr-lang's function of
// the same name: Python's round rounds half to even and returns an integer.
var pythonOnlyCalls = []string{"round("}

// CompileWith compiles src with the engine eng alone, without trying expr-lang first: the
// benchmarks compare the engines on the same expression with it.
func CompileWith(eng Engine, src Source, in *schemas.Schema, o Options) (*Program, error) {
	return compileDynamic(eng, src, in, o)
}
