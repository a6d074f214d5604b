package python

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"go.starlark.net/syntax"
)

// Build-time checks beyond Starlark's own (syntax, names): the fields a callable reads from
// its row, and regular expressions given as literals.

// check reports every problem it finds in the function fn of f.
func (c *compilation) check(f *syntax.File, fn *fnNode) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			c.checkPattern(call)
		}
		return true
	})
	if c.src.Kind == expr.KindExpression || len(fn.params) == 0 {
		return
	}
	id, ok := fn.params[0].(*syntax.Ident)
	if !ok {
		return
	}
	fn.walk(func(n syntax.Node) bool {
		if d, ok := n.(*syntax.DotExpr); ok {
			return !c.checkRowAttr(d, id.Name)
		}
		return true
	})
}

// walk visits the function's body or result.
func (fn *fnNode) walk(visit func(syntax.Node) bool) {
	if fn.result != nil {
		syntax.Walk(fn.result, visit)
	}
	for _, s := range fn.body {
		syntax.Walk(s, visit)
	}
}

// checkRowAttr checks row.a.b against the input schema: the chain of attributes read from
// the row parameter. It reports whether the chain starts at a name: the caller then skips
// the inner DotExprs of the chain.
func (c *compilation) checkRowAttr(d *syntax.DotExpr, rowName string) bool {
	var path []*syntax.Ident
	var x syntax.Expr = d
	for {
		dot, ok := x.(*syntax.DotExpr)
		if !ok {
			break
		}
		path = append([]*syntax.Ident{dot.Name}, path...)
		x = dot.X
	}
	id, ok := x.(*syntax.Ident)
	if !ok {
		return false
	}
	if id.Name != rowName {
		return true
	}
	fields := c.in.Fields
	for i, name := range path {
		if strings.HasPrefix(name.Name, "_") {
			return true // Row's own methods, such as _asdict
		}
		f, ok := findField(fields, name.Name)
		if !ok {
			names := fieldNames(fields)
			where := "the row"
			if i > 0 {
				where = fmt.Sprintf("%q", joinPath(path[:i]))
			}
			c.errorPos(name.NamePos, fmt.Sprintf("AttributeError: %s has no field %q%s", where, name.Name, diag.DidYouMean(name.Name, names)), fieldsHint(names))
			return true
		}
		if f.Type.Kind != schemas.Struct {
			return true // methods of the value (row.name.upper) are not the schema's business
		}
		fields = f.Type.Fields
	}
	return true
}

func findField(fields []schemas.Field, name string) (schemas.Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return schemas.Field{}, false
}

func fieldNames(fields []schemas.Field) []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}

func joinPath(ids []*syntax.Ident) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.Name
	}
	return strings.Join(parts, ".")
}

// patternFuncs are the functions of re whose first argument is a pattern.
var patternFuncs = map[string]bool{"match": true, "search": true, "fullmatch": true, "findall": true,
	"sub": true, "split": true, "compile": true}

// checkPattern refuses, at build time, a literal pattern Go's regexp cannot run as Python
// would (lookaround, backreferences, ...).
func (c *compilation) checkPattern(call *syntax.CallExpr) {
	dot, ok := call.Fn.(*syntax.DotExpr)
	if !ok || !patternFuncs[dot.Name.Name] || len(call.Args) == 0 {
		return
	}
	if mod, ok := dot.X.(*syntax.Ident); !ok || !c.importsAs(mod.Name, "re") {
		return
	}
	lit, ok := call.Args[0].(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return
	}
	if _, err := translate(lit.Value.(string), 0); err != nil {
		c.errorPos(lit.TokenPos, err.Error(), "sluice's re runs on Go's regexp (RE2), which has no lookaround or backreferences")
	}
}

// importsAs reports whether name is the module mod, imported.
func (c *compilation) importsAs(name, mod string) bool {
	for _, imp := range c.rw.imports {
		if imp.name == name && imp.module == mod && imp.member == "" {
			return true
		}
	}
	return false
}
