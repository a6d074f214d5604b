package expr

import (
	"fmt"
	"math/big"
	"reflect"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/sluicehq/sluice/schemas"
)

var (
	anyType      = schemas.Type{Kind: schemas.Any}
	durationType = reflect.TypeFor[time.Duration]()
	timeRType    = reflect.TypeFor[time.Time]()
	bytesRType   = reflect.TypeFor[[]byte]()
)

// typeOfNature maps the type expr-lang inferred for a node to a schema type.
func typeOfNature(n ast.Node) schemas.Type {
	nt := n.Nature()
	if nt == nil {
		return anyType
	}
	var elem reflect.Type
	if nt.Ref != nil {
		elem = nt.Ref.Type
	}
	return typeOfGo(nt.Type, elem)
}

// typeOfGo maps a Go type to a schema type, Any when it says nothing. elem, when known, is
// the element type of a list (expr types lists as []any and tracks elements apart).
func typeOfGo(t, elem reflect.Type) schemas.Type {
	switch {
	case t == nil:
		return anyType
	case t == durationType:
		return schemas.Type{Kind: schemas.Int64}
	case t == timeRType:
		return schemas.Type{Kind: schemas.Timestamp}
	case t == bytesRType:
		return schemas.Type{Kind: schemas.Bytes}
	}
	switch t.Kind() {
	case reflect.Bool:
		return schemas.Type{Kind: schemas.Bool}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return schemas.Type{Kind: schemas.Int64}
	case reflect.Float32, reflect.Float64:
		return schemas.Type{Kind: schemas.Float64}
	case reflect.String:
		return schemas.Type{Kind: schemas.String}
	case reflect.Slice, reflect.Array:
		if elem == nil {
			elem = t.Elem()
		}
		e := typeOfGo(elem, nil)
		return schemas.Type{Kind: schemas.Array, Elem: &e}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			e := typeOfGo(t.Elem(), nil)
			return schemas.Type{Kind: schemas.Map, Elem: &e}
		}
	}
	return anyType
}

// staticType returns the schema type of node: the field's own type where the node reads a
// field (or a member of a struct field), the common type of the branches of ?: and ??, and
// otherwise what expr-lang inferred.
func (c *compiler) staticType(n ast.Node) schemas.Type {
	switch n := n.(type) {
	case *ast.IdentifierNode, *ast.MemberNode:
		if f, ok := c.fieldOf(n); ok {
			return exprSchemaType(f.Type)
		}
	case *ast.BinaryNode:
		if n.Operator == "??" {
			return c.commonType(n.Left, n.Right)
		}
	case *ast.ConditionalNode:
		return c.commonType(n.Exp1, n.Exp2)
	case *ast.BuiltinNode:
		switch n.Name {
		case "first", "last", "find", "findLast":
			if t := c.staticType(n.Arguments[0]); t.Kind == schemas.Array && t.Elem != nil {
				return *t.Elem
			}
		}
	}
	return typeOfNature(n)
}

// commonType is the type of either of two branches, a nil branch taking the other's type.
func (c *compiler) commonType(a, b ast.Node) schemas.Type {
	if isNil(a) {
		return c.staticType(b)
	}
	if isNil(b) {
		return c.staticType(a)
	}
	ta, tb := c.staticType(a), c.staticType(b)
	if ta.Equal(tb) {
		return ta
	}
	return anyType
}

func isNil(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.NilNode:
		return true
	case *ast.ConstantNode:
		return n.Value == nil
	}
	return false
}

// fieldOf returns the schema field an identifier or a chain of struct members reads.
func (c *compiler) fieldOf(n ast.Node) (schemas.Field, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		if c.shadowed[n.Value] {
			return schemas.Field{}, false
		}
		return c.schema.Field(n.Value)
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok || n.Optional {
			return schemas.Field{}, false
		}
		parent, ok := c.fieldOf(n.Node)
		if !ok || parent.Type.Kind != schemas.Struct {
			return schemas.Field{}, false
		}
		for _, f := range parent.Type.Fields {
			if f.Name == prop.Value {
				f.Nullable = f.Nullable || parent.Nullable
				return f, true
			}
		}
	}
	return schemas.Field{}, false
}

// mayBeNil reports whether node can evaluate to nil rather than fail. It errs on the side
// of yes: a computed field is non-nullable only when this proves it.
func (c *compiler) mayBeNil(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.StringNode, *ast.BytesNode,
		*ast.ArrayNode, *ast.MapNode, *ast.UnaryNode:
		return false
	case *ast.ConstantNode:
		return n.Value == nil
	case *ast.IdentifierNode, *ast.MemberNode:
		f, ok := c.fieldOf(n)
		return !ok || f.Nullable
	case *ast.BinaryNode:
		if n.Operator == "??" {
			return c.mayBeNil(n.Left) && c.mayBeNil(n.Right)
		}
		return false
	case *ast.ConditionalNode:
		return c.mayBeNil(n.Exp1) || c.mayBeNil(n.Exp2)
	case *ast.BuiltinNode:
		switch n.Name {
		case "find", "findLast", "first", "last", "get", "reduce", "max", "min", "fromJSON", "fromBase64":
			return true
		}
		return !concrete(n)
	case *ast.CallNode:
		return !concrete(n)
	case *ast.VariableDeclaratorNode:
		return c.mayBeNil(n.Expr)
	}
	return true
}

// concrete reports whether the node has a type whose values cannot be nil.
func concrete(n ast.Node) bool {
	nt := n.Nature()
	if nt == nil || nt.Type == nil {
		return false
	}
	switch nt.Type.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Func, reflect.Chan:
		return false
	}
	return true
}

// normalize converts a value an expression produced into the row representation of kind k
// (Any: whatever it is). Integers become int64, floats float64, durations int64
// milliseconds, slices []any and string-keyed maps map[string]any, deeply.
func normalize(v any, k schemas.Kind) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		if k == schemas.Float64 {
			return float64(x), nil
		}
	case int:
		v = int64(x)
		if k == schemas.Float64 {
			v = float64(x)
		}
	case float64, string, bool, *big.Rat, []byte:
	case time.Time:
		v = x.UTC()
	default:
		v = normalizeDeep(v)
	}
	got := schemas.KindOf(v)
	switch {
	case k == schemas.Any || got == k,
		k == schemas.Date && got == schemas.Timestamp,
		k == schemas.Map && got == schemas.Struct:
		return v, nil
	}
	return nil, fmt.Errorf("the expression returned %s, not %s", schemas.Describe(v), schemas.Type{Kind: k}.Articled())
}

// normalizeDeep converts v and whatever it contains, copying containers only when something
// inside them changes (received values are immutable).
func normalizeDeep(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, bool, *big.Rat, []byte:
		return v
	case int:
		return int64(x)
	case time.Duration:
		return x.Milliseconds()
	case time.Time:
		return x.UTC()
	case []any:
		var out []any
		for i, e := range x {
			n := normalizeDeep(e)
			if out == nil && !same(n, e) {
				out = make([]any, len(x))
				copy(out, x[:i])
			}
			if out != nil {
				out[i] = n
			}
		}
		if out == nil {
			return x
		}
		return out
	case map[string]any:
		var out map[string]any
		for key, e := range x {
			if n := normalizeDeep(e); !same(n, e) {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[key] = n
			}
		}
		if out == nil {
			return x
		}
		return out
	}
	return normalizeReflect(reflect.ValueOf(v))
}

// same reports whether normalizeDeep left a value as it was.
func same(n, e any) bool {
	switch e.(type) {
	case []any, map[string]any:
		return reflect.ValueOf(n).UnsafePointer() == reflect.ValueOf(e).UnsafePointer()
	case int, time.Duration, time.Time:
		return false
	}
	return true
}

func normalizeReflect(rv reflect.Value) any {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalizeDeep(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			out[it.Key().String()] = normalizeDeep(it.Value().Interface())
		}
		return out
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return normalizeDeep(rv.Elem().Interface())
	}
	return fmt.Sprint(rv.Interface())
}
