package python

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

func init() { expr.RegisterEngine("python", engine{}) }

// engine compiles Python to Starlark for transforms/expr.
type engine struct{}

// fileOptions are the Starlark dialect options closest to Python: while loops, sets,
// top-level control flow, reassigned globals and recursion.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// genName is the name the generated code gives the function to call.
const genName = "_sluice_fn"

func (engine) Compile(src expr.Source, in *schemas.Schema, o expr.Options) (expr.Dynamic, error) {
	c := &compilation{src: src, in: in, opts: o}
	p := c.compile()
	if err := c.diags.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// compilation is the state of compiling one source.
type compilation struct {
	src   expr.Source
	in    *schemas.Schema
	opts  expr.Options
	diags diag.List

	rw     rewritten
	gen    []rune // the generated module
	prefix int    // runes of gen before the user's (rewritten) text
	starts []int  // rune offsets of gen's lines
}

func (c *compilation) compile() *program {
	c.rw = rewrite(c.src.Expr.Text)
	for _, e := range c.rw.errs {
		c.errorAt(e.offset, e.msg, e.hint)
	}
	predeclared := c.predeclared()
	p := &program{kind: c.src.Kind, c: c}
	var fnName string
	switch c.src.Kind {
	case expr.KindExpression:
		fnName = genName
		if !c.expressionModule(p) {
			return nil
		}
	case expr.KindCallable, expr.KindReduce:
		fnName = c.callableModule()
	case expr.KindFile:
		fnName = c.src.Name
		c.setGen("", c.rw.text, "")
	}
	if len(c.diags) > 0 {
		return nil
	}
	f, prog, err := starlark.SourceProgramOptions(fileOptions, filename, string(c.gen), predeclared.Has)
	if err != nil {
		c.compileErrors(err, predeclared)
		return nil
	}
	fn := c.function(f, fnName)
	if fn == nil {
		return nil
	}
	c.check(f, fn)
	if len(c.diags) > 0 {
		return nil
	}
	thread := &starlark.Thread{Name: "init", Print: func(*starlark.Thread, string) {}}
	// Top-level code runs when the pipeline is validated: a loop that does not end must not
	// hang sluice validate.
	thread.SetMaxExecutionSteps(initSteps)
	globals, err := prog.Init(thread, predeclared)
	if err != nil {
		c.runError(err)
		return nil
	}
	globals.Freeze()
	callable, ok := globals[fnName].(starlark.Callable)
	if !ok {
		c.errorAt(0, fmt.Sprintf("%s is not a function", fnName), "")
		return nil
	}
	p.fn = callable
	if c.src.Kind == expr.KindReduce {
		// The two values, passed as they are; the result has their type.
		for i, f := range c.in.Fields {
			p.params = append(p.params, param{index: i, shape: expr.ShapeOf(f.Type)})
		}
		p.typ, p.nullable = c.in.Fields[0].Type, true
		return p
	}
	if c.src.Kind != expr.KindExpression {
		p.shape = rowShape(c.in) // before lanes share the program
	}
	p.typ, p.nullable = c.infer(f, fn)
	if c.opts.Truth {
		p.truth, p.typ, p.nullable = true, schemas.Type{Kind: schemas.Bool}, false
	}
	return p
}

// initSteps bounds the Starlark steps a module's top-level code may take (a variable for
// the test of the bound).
var initSteps uint64 = 100_000_000

// rowSteps bounds the Starlark steps one row's call may take, so that a loop that never ends
// fails its row (to the error output) instead of stopping the pipeline without a word. A
// step is about one bytecode instruction: 10M is a few hundred milliseconds, far above what
// a per-row function needs.
var rowSteps uint64 = 10_000_000

// filename names the generated module in Starlark's positions; they are mapped back to the
// user's text before anyone sees them.
const filename = "<python>"

func (c *compilation) setGen(before, text, after string) {
	c.prefix = len([]rune(before))
	c.gen = []rune(before + text + after)
	c.starts = []int{0}
	for i, r := range c.gen {
		if r == '\n' {
			c.starts = append(c.starts, i+1)
		}
	}
}

// expressionModule generates `def _sluice_fn(a, b): return (<text>)` whose parameters are
// the fields the expression names.
func (c *compilation) expressionModule(p *program) bool {
	c.setGen("", c.rw.text, "")
	e, err := syntax.ParseExpr(filename, c.rw.text, 0)
	if err != nil {
		c.compileErrors(err, nil)
		return false
	}
	seen := map[string]bool{}
	var names []string
	syntax.Walk(e, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && !seen[id.Name] {
			if i, ok := c.in.Index(id.Name); ok && isIdentifier(id.Name) {
				seen[id.Name] = true
				names = append(names, id.Name)
				p.params = append(p.params, param{index: i, shape: expr.ShapeOf(c.in.Fields[i].Type)})
			}
		}
		return true
	})
	c.setGen("def "+genName+"("+strings.Join(names, ", ")+"): return (\n", c.rw.text, "\n)\n")
	return true
}

// callableModule generates the module of a callable: a lambda (or any expression) is
// assigned to a name; a def is the module itself and the last function it defines is called.
func (c *compilation) callableModule() string {
	wrapped := genName + " = (\n" + c.rw.text + "\n)\n"
	if _, err := fileOptions.Parse(filename, wrapped, 0); err == nil {
		c.setGen(genName+" = (\n", c.rw.text, "\n)\n")
		return genName
	}
	c.setGen("", c.rw.text, "")
	f, err := fileOptions.Parse(filename, string(c.gen), 0)
	if err != nil {
		return "" // reported when compiled
	}
	name := ""
	for _, s := range f.Stmts {
		switch s := s.(type) {
		case *syntax.DefStmt:
			name = s.Name.Name
		case *syntax.AssignStmt:
			if id, ok := s.LHS.(*syntax.Ident); ok {
				if _, isLambda := s.RHS.(*syntax.LambdaExpr); isLambda {
					name = id.Name
				}
			}
		}
	}
	if name == "" {
		c.errorAt(0, "the callable defines no function: write a lambda, or a def", "Beam calls the last function the code defines with the row")
	}
	return name
}

func isIdentifier(s string) bool {
	if s == "" || !isIdentStart([]rune(s)[0]) {
		return false
	}
	for _, r := range s {
		if !isIdentPart(r) {
			return false
		}
	}
	return !syntaxKeywords[s]
}

// syntaxKeywords are Starlark's keywords and reserved words, which cannot name a parameter.
var syntaxKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`and break continue def elif else for if in lambda load not or pass return while
		as assert async await class del except finally from global import is nonlocal raise try with yield None True False`) {
		syntaxKeywords[k] = true
	}
}

// locate returns the file position of the generated module's 1-based line and column.
func (c *compilation) locate(pos syntax.Position) diag.Pos {
	line, col := int(pos.Line), int(pos.Col)
	if line < 1 || line > len(c.starts) {
		return c.posAt(0)
	}
	gen := c.starts[line-1] + max(col, 1) - 1
	return c.posAt(c.rw.pos.orig(max(0, gen-c.prefix)))
}

// posAt returns the file position of an offset in the user's text.
func (c *compilation) posAt(offset int) diag.Pos {
	return expr.PosAt(c.src.Expr, c.opts.Lines, min(offset, len([]rune(c.src.Expr.Text))))
}

func (c *compilation) errorAt(offset int, msg, hint string) {
	c.diags = append(c.diags, diag.Diagnostic{Pos: c.posAt(offset), Summary: msg, Detail: hint})
}

func (c *compilation) errorPos(pos syntax.Position, msg, hint string) {
	c.diags = append(c.diags, diag.Diagnostic{Pos: c.locate(pos), Summary: msg, Detail: hint})
}

// compileErrors reports Starlark's syntax and name errors, in Python's words.
func (c *compilation) compileErrors(err error, predeclared starlark.StringDict) {
	var se syntax.Error
	var list resolve.ErrorList
	switch {
	case errors.As(err, &se):
		c.errorPos(se.Pos, "SyntaxError: "+syntaxMessage(se.Msg), syntaxHint(se.Msg))
	case errors.As(err, &list):
		for _, e := range list {
			c.resolveError(e, predeclared)
		}
	default:
		c.errorAt(0, err.Error(), "")
	}
}

// resolveError reports an undefined name, suggesting fields and builtins.
func (c *compilation) resolveError(e resolve.Error, predeclared starlark.StringDict) {
	name, ok := strings.CutPrefix(e.Msg, "undefined: ")
	if !ok {
		c.errorPos(e.Pos, "SyntaxError: "+e.Msg, "")
		return
	}
	candidates := append(c.in.Names(), predeclared.Keys()...)
	candidates = append(candidates, starlark.Universe.Keys()...)
	hint := ""
	if c.src.Kind == expr.KindExpression {
		hint = fieldsHint(c.in.Names())
	}
	c.errorPos(e.Pos, fmt.Sprintf("NameError: name %q is not defined%s", name, diag.DidYouMean(name, candidates)), hint)
}

func fieldsHint(names []string) string {
	if len(names) == 0 || len(names) > 30 {
		return ""
	}
	return "fields: " + strings.Join(names, ", ")
}

// reservedGot finds the Python keywords Starlark reserves but has no statement for.
var reservedGot = regexp.MustCompile(`^got (try|except|finally|class|with|raise|yield|global|nonlocal|del|assert|async|await|as|is|import|from)\b`)

// syntaxMessage rewords Starlark's syntax messages where Python says it differently.
func syntaxMessage(msg string) string {
	if kw, ok := strings.CutPrefix(msg, "keyword "); ok {
		kw, _, _ = strings.Cut(kw, " ")
		return fmt.Sprintf("%s is not supported by sluice's Python (Starlark)", kw)
	}
	if strings.HasPrefix(msg, "got '**'") {
		return "the ** operator is not supported by sluice's Python (Starlark): write pow(a, b)"
	}
	if m := reservedGot.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is not supported by sluice's Python (Starlark)", m[1])
	}
	return msg
}

func syntaxHint(msg string) string {
	switch {
	case strings.Contains(msg, "try") || strings.Contains(msg, "raise"):
		return "Starlark has no exceptions: a failing row goes to error_handling; fail(msg) fails it on purpose"
	case strings.Contains(msg, "class"):
		return "use dicts, or output_type with a struct"
	case strings.Contains(msg, "does not associate"):
		return "write a < b and b < c: Starlark has no chained comparisons"
	}
	return ""
}

// function finds the function to call in f and checks that it takes the row.
func (c *compilation) function(f *syntax.File, name string) *fnNode {
	var found *fnNode
	for _, s := range f.Stmts {
		switch s := s.(type) {
		case *syntax.DefStmt:
			if s.Name.Name == name {
				found = &fnNode{params: s.Params, body: s.Body, pos: s.Def}
			}
		case *syntax.AssignStmt:
			if id, ok := s.LHS.(*syntax.Ident); ok && id.Name == name {
				found = &fnNode{pos: id.NamePos}
				if l, ok := unparen(s.RHS).(*syntax.LambdaExpr); ok {
					found.params, found.result = l.Params, l.Body
				} else if c.src.Kind == expr.KindExpression {
					return nil
				}
			}
		}
	}
	if found == nil {
		c.errorAt(0, fmt.Sprintf("the file defines no function %q", name), "")
		return nil
	}
	if c.src.Kind == expr.KindReduce {
		if n := required(found.params); n != 2 {
			c.errorPos(found.pos, fmt.Sprintf("TypeError: a combine function must take two arguments (two values, or a value and a combined one), but it takes %d", n),
				"Combine calls it pairwise, f(combined, next), so it must be associative; Beam's form taking the list of values is not supported")
			return nil
		}
	} else if c.src.Kind != expr.KindExpression {
		if n := required(found.params); n != 1 || len(found.params) == 0 {
			c.errorPos(found.pos, fmt.Sprintf("TypeError: the callable must take one argument (the row), but it takes %d", n), "")
			return nil
		}
	}
	return found
}

// fnNode is the function the program calls: a def's body, or a lambda's result.
type fnNode struct {
	params []syntax.Expr
	body   []syntax.Stmt
	result syntax.Expr
	pos    syntax.Position
}

// required counts the parameters without a default.
func required(params []syntax.Expr) int {
	n := 0
	for _, p := range params {
		if _, ok := p.(*syntax.Ident); ok {
			n++
		}
	}
	return n
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
