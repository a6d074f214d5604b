package expr

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// Options say how to compile an expression.
type Options struct {
	// Language is the transform's language key: "" or generic (the default), expr, or
	// python (only for text that is also expr with the same meaning).
	Language string
	// Lines are the pipeline file's lines, to place errors inside folded and quoted scalars;
	// without them positions past the first line of such scalars are approximate.
	Lines []string
	// OutputType, when set, is the type of the result: it is converted at run time.
	OutputType *schemas.Type
	// Truth asks for a boolean by Python's truthiness (Filter's keep with language python:
	// a non-empty string, a match object, a non-zero number keep the row).
	Truth bool
}

// Program is a compiled, type-checked expression. It is immutable and safe for concurrent
// use; run it with an Evaluator.
type Program struct {
	src   component.Expr
	lines []string
	prog  *vm.Program // nil when the expression only reads a field or dyn runs it
	field int         // the field read when prog and dyn are nil
	dyn   Dynamic     // the program of an Engine (Starlark for python), or nil

	typ      schemas.Type
	nullable bool
	convert  *schemas.Type
	used     []int
}

// Type returns the schema type of the expression's results.
func (p *Program) Type() schemas.Type { return p.typ }

// Nullable reports whether the expression can yield null.
func (p *Program) Nullable() bool { return p.nullable }

// Field returns the index of the input field the expression reads unchanged, when it is
// just a field name (a rename keeps the field's type and nullability).
func (p *Program) Field() (int, bool) { return p.field, p.prog == nil && p.dyn == nil }

// Text returns the expression's text.
func (p *Program) Text() string { return p.src.Text }

// CheckLanguage returns an error for a language sluice cannot evaluate.
func CheckLanguage(lang string) error {
	switch strings.ToLower(lang) {
	case "", "generic", "expr", "python":
		return nil
	}
	if engineFor(lang) != nil {
		return nil // an engine-only language, such as javascript
	}
	return fmt.Errorf("language %q is not supported: sluice evaluates expr-lang expressions "+
		"(language generic or expr), Python (language python), JavaScript (language javascript) and SQL (language sql)", lang)
}

// Truthy reports whether a boolean result of language lang (Filter's keep) is taken by the
// language's truthiness, as Beam does for Python and JavaScript; for SQL, as WHERE keeps
// rows: a NULL condition does not keep the row.
func Truthy(lang string) bool {
	return strings.EqualFold(lang, "python") || strings.EqualFold(lang, "javascript") || strings.EqualFold(lang, "sql")
}

// Compile type-checks e against the fields of in. Its errors are diag.Diagnostic values
// placed inside the expression's YAML text.
func Compile(e component.Expr, in *schemas.Schema, o Options) (p *Program, err error) {
	c := &compiler{src: e, schema: in, opts: o, shadowed: map[string]bool{}}
	switch l := strings.ToLower(o.Language); l {
	case "", "generic", "expr":
	case "python":
		c.engine = engineFor(l)
	default:
		// Languages other than Python have no fast path: expr-lang's meaning differs.
		c.engine, c.engineOnly = engineFor(l), true
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, c.diagnostic(0, fmt.Sprintf("internal error compiling the expression: %v", r), "")
		}
	}()
	p, err = c.compile()
	if err == nil && o.Truth && c.engine != nil && p.dyn == nil && p.typ.Kind != schemas.Bool {
		return c.dynamic() // the engine applies Python's truthiness
	}
	return p, err
}

type compiler struct {
	src      component.Expr
	schema   *schemas.Schema
	opts     Options
	text     string
	shadowed map[string]bool
	engine   Engine // compiles the Python expr-lang refuses; nil when none is registered
	// engineOnly is set for a language the engine compiles all of (javascript).
	engineOnly bool
}

func (c *compiler) compile() (*Program, error) {
	if err := CheckLanguage(c.opts.Language); err != nil {
		return nil, c.diagnostic(0, err.Error(), "")
	}
	p := &Program{src: c.src, lines: c.opts.Lines, field: -1, convert: c.opts.OutputType}
	if i, ok := c.schema.Index(strings.TrimSpace(c.src.Text)); ok && (!c.engineOnly || !c.opts.Truth) {
		return c.finish(p, i), nil
	}
	if c.engineOnly && c.engine != nil {
		return c.dynamic()
	}
	c.text = c.src.Text
	python := strings.EqualFold(c.opts.Language, "python")
	if python {
		if c.engine != nil && containsAny(c.text, pythonOnlyCalls) {
			return c.dynamic()
		}
		text, err := pythonText(c.text)
		if err != nil {
			return c.refused(err)
		}
		c.text = text
	}
	if strings.TrimSpace(c.text) == "" {
		return nil, c.diagnostic(0, "the expression is empty", "")
	}
	tree, err := parser.Parse(c.text)
	if err != nil {
		return c.refused(err)
	}
	if python {
		if err := pythonTree(tree.Node); err != nil {
			return c.refused(err)
		}
	}
	if err := zeroLiteralDivisor(tree.Node); err != nil {
		return nil, c.toDiagnostic(err)
	}
	prog, err := expr.Compile(c.text, expr.Env(envTypes(c.schema)), withFunctions,
		expr.Patch(divisionPatch{python: python}), expr.Patch(nullEqualityPatch{schema: c.schema}))
	if err != nil {
		return c.refused(err)
	}
	root := prog.Node()
	if python && c.engine != nil && root.Type() == durationType {
		return c.dynamic() // Beam's durations are seconds, expr-lang's milliseconds
	}
	c.collectShadowed(root)
	if id, ok := root.(*ast.IdentifierNode); ok && !c.shadowed[id.Value] {
		if i, ok := c.schema.Index(id.Value); ok {
			return c.finish(p, i), nil
		}
	}
	p.prog = prog
	p.used = c.usedFields(root)
	p.typ = c.staticType(root)
	p.nullable = p.typ.Kind == schemas.Any || c.mayBeNil(root)
	if p.convert != nil {
		p.typ = *p.convert
	}
	return p, nil
}

// refused reports err, expr-lang's refusal of the text, unless the text is Python an engine
// runs with its meaning: then the engine compiles it.
func (c *compiler) refused(err error) (*Program, error) {
	if c.engine == nil || !c.fallsBack(err) {
		return nil, c.toDiagnostic(err)
	}
	return c.dynamic()
}

func (c *compiler) dynamic() (*Program, error) {
	return compileDynamic(c.engine, Source{Kind: KindExpression, Expr: c.src}, c.schema, c.opts)
}

// fallsBack refines the package's fallsBack: an unknown name falls back only when it is
// called (a Python builtin such as str), not when it is a misspelt field.
func (c *compiler) fallsBack(err error) bool {
	var fe *file.Error
	if errors.As(err, &fe) && strings.HasPrefix(fe.Message, "unknown name ") {
		return c.calledAt(fe.From + len([]rune(strings.TrimPrefix(fe.Message, "unknown name "))))
	}
	return fallsBack(err)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// finish makes p a program that reads field i.
func (c *compiler) finish(p *Program, i int) *Program {
	f := c.schema.Fields[i]
	p.field, p.typ, p.nullable, p.used = i, f.Type, f.Nullable, []int{i}
	if p.convert != nil {
		p.typ = *p.convert
	}
	return p
}

func (c *compiler) collectShadowed(root ast.Node) {
	ast.Find(root, func(n ast.Node) bool {
		if v, ok := n.(*ast.VariableDeclaratorNode); ok {
			c.shadowed[v.Name] = true
		}
		return false
	})
}

// usedFields returns the indexes of the fields the expression reads, in schema order.
func (c *compiler) usedFields(root ast.Node) []int {
	seen := map[int]bool{}
	all := false
	ast.Find(root, func(n ast.Node) bool {
		if id, ok := n.(*ast.IdentifierNode); ok {
			if id.Value == "$env" {
				all = true
			} else if i, ok := c.schema.Index(id.Value); ok {
				seen[i] = true
			}
		}
		return false
	})
	var used []int
	for i := range c.schema.Fields {
		if all || seen[i] {
			used = append(used, i)
		}
	}
	return used
}

// toDiagnostic turns a compile error into a diagnostic placed inside the YAML text.
func (c *compiler) toDiagnostic(err error) error {
	var se *sourceError
	if errors.As(err, &se) {
		return c.diagnostic(se.offset, se.msg, se.hint)
	}
	var fe *file.Error
	if !errors.As(err, &fe) {
		return c.diagnostic(0, cleanMessage(err.Error()), "")
	}
	msg, hint := c.rewrite(fe.Message, fe.From)
	return c.diagnostic(fe.From, msg, hint)
}

func (c *compiler) diagnostic(offset int, msg, hint string) error {
	return diag.Diagnostic{Pos: filePos(c.src, c.opts.Lines, offset), Summary: msg, Detail: hint}
}

// rewrite turns expr-lang's message at offset into one that speaks of fields and functions.
func (c *compiler) rewrite(msg string, offset int) (string, string) {
	if name, ok := strings.CutPrefix(msg, "unknown name "); ok {
		if c.calledAt(offset + len([]rune(name))) {
			hint := ""
			if f, ok := pythonFunctions[name]; ok {
				hint = "write " + f
			}
			return fmt.Sprintf("unknown function %q in the expression%s", name, diag.DidYouMean(name, functionNames())), hint
		}
		return fmt.Sprintf("unknown field %q in the expression%s", name, diag.DidYouMean(name, c.schema.Names())),
			fieldsHint(c.schema.Names())
	}
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		path := c.memberPath(offset)
		names := c.structFields(path)
		return fmt.Sprintf("unknown field %q in %q%s", name, strings.Join(path, "."), diag.DidYouMean(name, names)),
			fieldsHint(names)
	}
	return cleanMessage(msg), ""
}

// calledAt reports whether the text after offset opens an argument list.
func (c *compiler) calledAt(offset int) bool {
	rest := []rune(c.text)
	if offset > len(rest) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(string(rest[offset:]), " \t\r\n"), "(")
}

// memberPath returns the chain of names before the member at offset: "user.address.zpi"
// with offset at zpi gives [user address].
func (c *compiler) memberPath(offset int) []string {
	runes := []rune(c.text)
	end := min(offset, len(runes))
	start := end
	for start > 0 && (isIdent(runes[start-1]) || runes[start-1] == '.' || runes[start-1] == '?') {
		start--
	}
	var path []string
	for _, part := range strings.Split(strings.ReplaceAll(string(runes[start:end]), "?", ""), ".") {
		if part != "" {
			path = append(path, part)
		}
	}
	return path
}

func isIdent(r rune) bool {
	return r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

// structFields returns the field names of the struct at path, or nil.
func (c *compiler) structFields(path []string) []string {
	fields := c.schema.Fields
	for _, name := range path {
		var next []schemas.Field
		for _, f := range fields {
			if f.Name == name && f.Type.Kind == schemas.Struct {
				next = f.Type.Fields
			}
		}
		if next == nil {
			return nil
		}
		fields = next
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}

// fieldsHint lists the fields an expression can read, when there are few enough to help.
func fieldsHint(names []string) string {
	if len(names) == 0 || len(names) > 30 {
		return ""
	}
	return "fields: " + strings.Join(names, ", ")
}

// functionNames are the builtin functions, for suggestions.
func functionNames() []string {
	var names []string
	for _, f := range builtin.Builtins {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}
