package javascript

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

func init() { expr.RegisterEngine("javascript", engine{}) }

// engine compiles JavaScript for transforms/expr.
type engine struct{}

// filename names the generated script in goja's positions; they are mapped back to the
// user's text before anyone sees them.
const filename = "<javascript>"

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

	fnName string // the function a script defines to call; "" for a function expression
	gen    string // the generated script: prefix, the user's text, suffix
	prefix int    // bytes of gen before the user's text
	starts []int  // byte offsets of gen's lines
}

func (c *compilation) compile() *program {
	p := &program{kind: c.src.Kind, c: c}
	text := c.src.Expr.Text
	switch c.src.Kind {
	case expr.KindExpression:
		p.params = c.exprParams(text)
		names := make([]string, len(p.params))
		for i, prm := range p.params {
			names[i] = c.in.Fields[prm.index].Name
		}
		c.setGen("(function("+strings.Join(names, ", ")+") { return (\n", text, "\n); })")
	case expr.KindCallable:
		c.setGen("(\n", text, "\n)")
		if _, err := parser.ParseFile(nil, filename, c.gen, 0, parser.WithDisableSourceMaps); err != nil {
			// Not one function expression: a script whose last function is the callable.
			c.setGen("", text, "")
			if c.fnName = c.lastFunction(); c.fnName != "" {
				c.setGen("", text, "\n;("+c.fnName+")")
			}
		}
	case expr.KindFile:
		if f := c.src.Expr.Pos.File; f != "" && !strings.HasSuffix(f, ".js") {
			c.errorAt(0, fmt.Sprintf("the file %q is not a .js file", f), "language javascript runs JavaScript files")
			return nil
		}
		c.setGen("", text, "")
		if !c.defines(c.src.Name) {
			c.errorAt(0, fmt.Sprintf("the file defines no function %q", c.src.Name), "")
			return nil
		}
		c.fnName = c.src.Name
		c.setGen("", text, "\n;("+c.fnName+")")
	}
	tree, err := parser.ParseFile(nil, filename, c.gen, 0, parser.WithDisableSourceMaps)
	if err != nil {
		c.syntaxErrors(err)
		return nil
	}
	fn := c.function(tree)
	if fn == nil {
		return nil
	}
	c.check(fn)
	prog, err := goja.CompileAST(tree, false)
	if err != nil {
		c.compileError(err)
		return nil
	}
	if len(c.diags) > 0 {
		return nil
	}
	p.prog = prog
	if c.src.Kind != expr.KindExpression {
		p.shape = rowShape(c.in) // before lanes are made
	}
	// The top-level code runs once now, so that its errors are build-time errors.
	l, ee := p.newLane(initTimeout)
	if ee != nil {
		c.diags = append(c.diags, diag.Diagnostic{Pos: ee.Pos, Summary: ee.Msg})
		return nil
	}
	p.lanes.Put(l) // the first lane's runtime serves rows too
	p.typ, p.nullable = c.infer(fn)
	if c.opts.Truth {
		p.truth, p.typ, p.nullable = true, schemas.Type{Kind: schemas.Bool}, false
	}
	return p
}

// initTimeout bounds the top-level code at build time: a loop that does not end must not
// hang sluice validate.
var initTimeout = 10 * time.Second

func (c *compilation) setGen(before, text, after string) {
	c.prefix = len(before)
	c.gen = before + text + after
	c.starts = []int{0}
	for i := 0; i < len(c.gen); i++ {
		if c.gen[i] == '\n' {
			c.starts = append(c.starts, i+1)
		}
	}
}

// identifier matches the names an expression may read as variables.
var identifier = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$]*`)

// exprParams returns the fields an expression names, as Beam binds them: each field whose
// name is a JavaScript identifier and occurs in the text becomes a variable.
func (c *compilation) exprParams(text string) []param {
	seen := map[string]bool{}
	var params []param
	for _, loc := range identifier.FindAllStringIndex(text, -1) {
		name := text[loc[0]:loc[1]]
		if seen[name] || reserved[name] || (loc[0] > 0 && text[loc[0]-1] == '.') {
			continue
		}
		seen[name] = true
		if i, ok := c.in.Index(name); ok {
			params = append(params, param{index: i, shape: expr.ShapeOf(c.in.Fields[i].Type)})
		}
	}
	return params
}

// reserved are JavaScript's reserved words, which cannot name a variable.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case catch class const continue debugger default delete do else enum
		export extends false finally for function if import in instanceof let new null return super switch this
		throw true try typeof var void while with yield await implements interface package private protected
		public static arguments eval undefined NaN Infinity`) {
		reserved[w] = true
	}
}

// topLevel parses the generated script, nil when it does not parse (reported later).
func (c *compilation) topLevel() *ast.Program {
	tree, err := parser.ParseFile(nil, filename, c.gen, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil
	}
	return tree
}

// lastFunction names the last function a script defines at its top level.
func (c *compilation) lastFunction() string {
	tree := c.topLevel()
	if tree == nil {
		return ""
	}
	name := ""
	for _, s := range tree.Body {
		if n := declaredFunction(s); n != "" {
			name = n
		}
	}
	if name == "" {
		c.errorAt(0, "the callable defines no function: write a function or an arrow function", "Beam calls the function with the row")
	}
	return name
}

// defines reports whether the script declares name at its top level.
func (c *compilation) defines(name string) bool {
	tree := c.topLevel()
	if tree == nil {
		return true // the syntax error is reported instead
	}
	for _, s := range tree.Body {
		if declaredFunction(s) == name {
			return true
		}
	}
	return false
}

// declaredFunction names the function a statement declares: function f() {} or
// var/let/const f = a function.
func declaredFunction(s ast.Statement) string {
	switch s := s.(type) {
	case *ast.FunctionDeclaration:
		return string(s.Function.Name.Name)
	case *ast.VariableStatement:
		return bindingFunction(s.List)
	case *ast.LexicalDeclaration:
		return bindingFunction(s.List)
	}
	return ""
}

func bindingFunction(list []*ast.Binding) string {
	name := ""
	for _, b := range list {
		id, ok := b.Target.(*ast.Identifier)
		if !ok {
			continue
		}
		switch b.Initializer.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			name = string(id.Name)
		}
	}
	return name
}

// offsetOf returns the rune offset in the user's text of the generated script's 1-based
// line and (byte) column.
func (c *compilation) offsetOf(line, col int) int {
	if line < 1 || line > len(c.starts) {
		return 0
	}
	off := c.starts[line-1] + max(col, 1) - 1 - c.prefix
	text := c.src.Expr.Text
	off = max(0, min(off, len(text)))
	return utf8.RuneCountInString(text[:off])
}

// posAt returns the file position of a rune offset in the user's text.
func (c *compilation) posAt(offset int) diag.Pos {
	return expr.PosAt(c.src.Expr, c.opts.Lines, offset)
}

func (c *compilation) errorAt(offset int, msg, hint string) {
	c.diags = append(c.diags, diag.Diagnostic{Pos: c.posAt(offset), Summary: msg, Detail: hint})
}

func (c *compilation) errorAtIdx(idx int, msg, hint string) {
	line, col := c.lineCol(idx)
	c.errorAt(c.offsetOf(line, col), msg, hint)
}

// lineCol returns the line and column of goja's 1-based index into the generated script.
func (c *compilation) lineCol(idx int) (line, col int) {
	off := max(idx-1, 0)
	line = 1
	for line < len(c.starts) && c.starts[line] <= off {
		line++
	}
	return line, off - c.starts[line-1] + 1
}

// syntaxErrors reports the parser's first error at its place in the user's text.
func (c *compilation) syntaxErrors(err error) {
	var list parser.ErrorList
	if !errors.As(err, &list) {
		c.errorAt(0, "SyntaxError: "+err.Error(), "")
		return
	}
	if len(list) > 0 {
		// The first error only: the parser's later ones follow from it.
		e := list[0]
		c.errorAt(c.offsetOf(e.Position.Line, e.Position.Column), "SyntaxError: "+e.Message, "")
	}
}

// compileError reports what goja's compiler refuses after parsing (a redeclared let, ...).
func (c *compilation) compileError(err error) {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) && se.File != nil {
		p := se.File.Position(se.Offset)
		c.errorAt(c.offsetOf(p.Line, p.Column), "SyntaxError: "+se.Message, "")
		return
	}
	c.errorAt(0, "SyntaxError: "+err.Error(), "")
}
