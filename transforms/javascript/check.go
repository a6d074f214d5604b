package javascript

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// Build-time checks beyond goja's own (syntax): the function to call and its arity, and the
// fields the code reads from its row (row.a.b) against the input schema.

// fnNode is the function the program calls.
type fnNode struct {
	params *ast.ParameterList
	body   ast.Node // a *ast.BlockStatement, or an arrow function's expression
	idx    int      // where it starts, for errors
}

// function finds the function to call in the generated script and checks that it takes
// the row.
func (c *compilation) function(tree *ast.Program) *fnNode {
	var found *fnNode
	if c.src.Kind == expr.KindFile || c.prefix == 0 {
		for _, s := range tree.Body {
			if f := namedFunction(s, c.fnName); f != nil {
				found = f
			}
		}
	} else if len(tree.Body) > 0 {
		if s, ok := tree.Body[0].(*ast.ExpressionStatement); ok {
			found = literalFunction(s.Expression)
		}
		if found == nil {
			c.errorAt(0, "the callable is not a function: write function (row) { ... } or row => ...", "")
			return nil
		}
	}
	if found == nil {
		return nil // reported by lastFunction or defines
	}
	if c.src.Kind != expr.KindExpression {
		if n := required(found.params); n != 1 {
			c.errorAtIdx(found.idx, fmt.Sprintf("TypeError: the callable must take one argument (the row), but it takes %d", n), "")
			return nil
		}
	}
	return found
}

// literalFunction returns the function of a function or arrow function expression.
func literalFunction(e ast.Expression) *fnNode {
	switch f := e.(type) {
	case *ast.FunctionLiteral:
		return &fnNode{params: f.ParameterList, body: f.Body, idx: int(f.Idx0())}
	case *ast.ArrowFunctionLiteral:
		n := &fnNode{params: f.ParameterList, body: f.Body, idx: int(f.Idx0())}
		if b, ok := f.Body.(*ast.ExpressionBody); ok {
			n.body = b.Expression
		}
		return n
	}
	return nil
}

// namedFunction returns the function statement s declares as name, or nil.
func namedFunction(s ast.Statement, name string) *fnNode {
	var list []*ast.Binding
	switch s := s.(type) {
	case *ast.FunctionDeclaration:
		if string(s.Function.Name.Name) == name {
			return literalFunction(s.Function)
		}
	case *ast.VariableStatement:
		list = s.List
	case *ast.LexicalDeclaration:
		list = s.List
	}
	for _, b := range list {
		if id, ok := b.Target.(*ast.Identifier); ok && string(id.Name) == name {
			return literalFunction(b.Initializer)
		}
	}
	return nil
}

// required counts the parameters without a default (a rest parameter counts as none).
func required(params *ast.ParameterList) int {
	n := 0
	for _, b := range params.List {
		if b.Initializer == nil {
			n++
		}
	}
	return n
}

// paramName returns the name of parameter i, "" when it is a pattern or missing.
func paramName(params *ast.ParameterList, i int) string {
	if i >= len(params.List) {
		return ""
	}
	if id, ok := params.List[i].Target.(*ast.Identifier); ok {
		return string(id.Name)
	}
	return ""
}

// structRoot is a variable whose properties are a schema's fields: a callable's row, or a
// struct field an expression reads.
type structRoot struct {
	fields []schemas.Field
	where  string // "the row", or the field's name
	prefix string // what names a nested struct: "", or the field's name and a dot
}

// check reports the fields fn reads that its row lacks.
func (c *compilation) check(fn *fnNode) {
	roots := map[string]structRoot{}
	for i := range fn.params.List {
		name := paramName(fn.params, i)
		switch {
		case name == "":
		case c.src.Kind != expr.KindExpression && i == 0:
			roots[name] = structRoot{fields: c.in.Fields, where: "the row"}
		case c.src.Kind == expr.KindExpression:
			if f, ok := c.in.Field(name); ok && f.Type.Kind == schemas.Struct {
				roots[name] = structRoot{fields: f.Type.Fields, where: fmt.Sprintf("%q", name), prefix: name + "."}
			}
		}
	}
	if len(roots) > 0 {
		c.walkChecks(fn.body, roots)
	}
}

// walkChecks checks the property chains of n that start at a root; a nested function
// whose parameter reuses a root's name hides that root.
func (c *compilation) walkChecks(n ast.Node, roots map[string]structRoot) {
	walk(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			f := literalFunction(x.(ast.Expression))
			inner := map[string]structRoot{}
			for k, v := range roots {
				inner[k] = v
			}
			for i := range f.params.List {
				delete(inner, paramName(f.params, i))
			}
			if len(inner) < len(roots) {
				c.walkChecks(f.body, inner)
				return false
			}
		case *ast.DotExpression:
			return !c.checkChain(x, roots)
		}
		return true
	})
}

// checkChain checks row.a.b against its root's fields, and reports whether the chain
// starts at a root (the caller then skips its inner DotExpressions).
func (c *compilation) checkChain(d *ast.DotExpression, roots map[string]structRoot) bool {
	var path []ast.Identifier
	var x ast.Expression = d
	for {
		dot, ok := x.(*ast.DotExpression)
		if !ok {
			break
		}
		path = append([]ast.Identifier{dot.Identifier}, path...)
		x = dot.Left
	}
	id, ok := x.(*ast.Identifier)
	if !ok {
		return false
	}
	root, ok := roots[string(id.Name)]
	if !ok {
		return false
	}
	fields := root.fields
	for i, name := range path {
		s := schemas.New(fields...)
		f, ok := s.Field(string(name.Name))
		if !ok {
			names := s.Names()
			where := root.where
			if i > 0 {
				where = fmt.Sprintf("%q", root.prefix+joinPath(path[:i]))
			}
			hint := ""
			if len(names) <= 30 {
				hint = "fields: " + strings.Join(names, ", ")
			}
			c.errorAtIdx(int(name.Idx), fmt.Sprintf("TypeError: %s has no field %q%s", where, name.Name, diag.DidYouMean(string(name.Name), names)), hint)
			return true
		}
		if f.Type.Kind != schemas.Struct {
			return true // properties of the value (row.name.length) are not the schema's business
		}
		fields = f.Type.Fields
	}
	return true
}

func joinPath(ids []ast.Identifier) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = string(id.Name)
	}
	return strings.Join(parts, ".")
}

// nodeType is the interface every syntax node implements.
var nodeType = reflect.TypeOf((*ast.Node)(nil)).Elem()

// walk visits n and, while visit returns true, its children. goja's ast package has no
// walker: this one follows the fields that hold nodes, by reflection (build time only).
func walk(n ast.Node, visit func(ast.Node) bool) {
	if n == nil {
		return
	}
	if rv := reflect.ValueOf(n); rv.Kind() != reflect.Pointer || rv.IsNil() || !visit(n) {
		return
	}
	walkValue(reflect.ValueOf(n).Elem(), visit)
}

func walkValue(v reflect.Value, visit func(ast.Node) bool) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkValue(v.Field(i), visit)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkValue(v.Index(i), visit)
		}
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type().Implements(nodeType) {
			walk(v.Interface().(ast.Node), visit)
		}
	}
}
