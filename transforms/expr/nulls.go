package expr

import (
	"fmt"
	"reflect"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/sluicehq/sluice/schemas"
)

// fnMaybeNull marks an operand that may be null, so that == and != compare it as a value of
// any type: a null field then equals nil and differs from everything else, as None does in
// Python and as users expect of `name == 'x'`. Without it expr-lang compiles a comparison of
// two strings to one that assumes both are strings, and fails on a null.
const fnMaybeNull = "_maybe_null"

var maybeNull = &builtin.Function{
	Name: fnMaybeNull,
	Func: func(args ...any) (any, error) { return args[0], nil },
	Validate: func(args []reflect.Type) (reflect.Type, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s takes one argument", fnMaybeNull)
		}
		return reflect.TypeFor[any](), nil
	},
}

// nullEqualityPatch wraps the nullable fields compared with == or != in fnMaybeNull.
type nullEqualityPatch struct{ schema *schemas.Schema }

func (p nullEqualityPatch) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok || (b.Operator != "==" && b.Operator != "!=") {
		return
	}
	for _, side := range []*ast.Node{&b.Left, &b.Right} {
		if id, ok := (*side).(*ast.IdentifierNode); ok && p.nullable(id.Value) {
			ast.Patch(side, &ast.CallNode{Callee: &ast.IdentifierNode{Value: fnMaybeNull}, Arguments: []ast.Node{id}})
		}
	}
}

func (p nullEqualityPatch) nullable(name string) bool {
	i, ok := p.schema.Index(name)
	return ok && p.schema.Fields[i].Nullable
}
