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
	roots := c.structRoots(fn)
	if len(roots) == 0 {
		return
	}
	fn.walk(func(n syntax.Node) bool {
		if d, ok := n.(*syntax.DotExpr); ok {
			return !c.checkAttrs(d, roots)
		}
		return true
	})
}

// structRoot is a parameter whose attributes are a schema's fields: a callable's row, or a
// struct field an expression reads.
type structRoot struct {
	fields []schemas.Field
	where  string // "the row", or the field's name
	prefix string // what names a nested struct: "", or the field's name and a dot
}

// structRoots maps the bindings of fn's struct parameters (resolved by Starlark, so that a
// comprehension variable of the same name is not one) to their fields.
func (c *compilation) structRoots(fn *fnNode) map[any]structRoot {
	roots := map[any]structRoot{}
	for i, p := range fn.params {
		id, ok := p.(*syntax.Ident)
		if !ok || id.Binding == nil {
			continue
		}
		switch {
		case c.src.Kind == expr.KindReduce:
		case c.src.Kind != expr.KindExpression && i == 0:
			roots[id.Binding] = structRoot{fields: c.in.Fields, where: "the row"}
		case c.src.Kind == expr.KindExpression:
			if f, ok := c.in.Field(id.Name); ok && f.Type.Kind == schemas.Struct {
				roots[id.Binding] = structRoot{fields: f.Type.Fields, where: fmt.Sprintf("%q", id.Name), prefix: id.Name + "."}
			}
		}
	}
	return roots
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

// checkAttrs checks row.a.b against the input schema: the chain of attributes read from a
// struct root. It reports whether the chain starts at a name: the caller then skips the
// inner DotExprs of the chain.
func (c *compilation) checkAttrs(d *syntax.DotExpr, roots map[any]structRoot) bool {
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
	root, ok := roots[id.Binding]
	if !ok || id.Binding == nil {
		return true
	}
	fields := root.fields
	for i, name := range path {
		if strings.HasPrefix(name.Name, "_") {
			return true // Row's own methods, such as _asdict
		}
		f, ok := findField(fields, name.Name)
		if !ok {
			names := fieldNames(fields)
			where := root.where
			if i > 0 {
				where = fmt.Sprintf("%q", root.prefix+joinPath(path[:i]))
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
