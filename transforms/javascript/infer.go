package javascript

import (
	"math"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// Type inference: JavaScript is dynamic, so the schema type of a result is inferred from
// the shape of the code where it is plain (literals, fields, arithmetic, comparisons, string
// methods, conditionals, the returns of a body) and is any elsewhere. Numbers are integers
// when every operand is (as the schema says of fields); division gives a float.

// inferred is the type of an expression and whether it may be null.
type inferred struct {
	t        schemas.Type
	nullable bool
}

var (
	anyType    = inferred{t: schemas.Type{Kind: schemas.Any}, nullable: true}
	boolType   = inferred{t: schemas.Type{Kind: schemas.Bool}}
	intType    = inferred{t: schemas.Type{Kind: schemas.Int64}}
	floatType  = inferred{t: schemas.Type{Kind: schemas.Float64}}
	stringType = inferred{t: schemas.Type{Kind: schemas.String}}
)

// infer returns the type of fn's result.
func (c *compilation) infer(fn *fnNode) (schemas.Type, bool) {
	env := map[string]inferred{}
	for i := range fn.params.List {
		name := paramName(fn.params, i)
		switch {
		case name == "":
		case c.src.Kind == expr.KindExpression:
			if f, ok := c.in.Field(name); ok {
				env[name] = inferred{t: f.Type, nullable: f.Nullable}
			}
		case i == 0:
			env[name] = inferred{t: schemas.Type{Kind: schemas.Struct, Fields: c.in.Fields}}
		}
	}
	var r inferred
	switch b := fn.body.(type) {
	case *ast.BlockStatement:
		r = c.returns(b, env)
	case ast.Expression:
		r = typeOf(b, env)
	}
	return r.t, r.nullable
}

// returns unifies the types of a body's return statements (not those of nested functions).
func (c *compilation) returns(b *ast.BlockStatement, env map[string]inferred) inferred {
	var out *inferred
	walk(b, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			return false
		case *ast.ReturnStatement:
			r := inferred{t: schemas.Type{Kind: schemas.Any}, nullable: true} // return;
			if x.Argument != nil {
				r = typeOf(x.Argument, env) // locals are unknown: any
			}
			if out == nil {
				out = &r
			} else {
				u := unify(*out, r)
				out = &u
			}
		}
		return true
	})
	if out == nil {
		return anyType
	}
	return *out
}

// typeOf infers the type of e; env gives the variables whose type is known.
func typeOf(e ast.Expression, env map[string]inferred) inferred {
	switch x := e.(type) {
	case *ast.NumberLiteral:
		if f, ok := x.Value.(float64); ok && (f != math.Trunc(f) || math.IsInf(f, 0)) {
			return floatType
		}
		return intType
	case *ast.StringLiteral, *ast.TemplateLiteral:
		return stringType
	case *ast.BooleanLiteral:
		return boolType
	case *ast.Identifier:
		if t, ok := env[string(x.Name)]; ok {
			return t
		}
	case *ast.DotExpression:
		return member(x, env)
	case *ast.UnaryExpression:
		return unary(x, env)
	case *ast.BinaryExpression:
		return binary(x, env)
	case *ast.ConditionalExpression:
		return unify(typeOf(x.Consequent, env), typeOf(x.Alternate, env))
	case *ast.CallExpression:
		return call(x, env)
	case *ast.ArrayLiteral:
		return inferred{t: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.Any}}}
	}
	return anyType
}

// member types row.field (a schema's field) and the length of strings and arrays.
func member(x *ast.DotExpression, env map[string]inferred) inferred {
	left := typeOf(x.Left, env)
	name := string(x.Identifier.Name)
	switch left.t.Kind {
	case schemas.Struct:
		if f, ok := schemas.New(left.t.Fields...).Field(name); ok {
			return inferred{t: f.Type, nullable: f.Nullable}
		}
	case schemas.String, schemas.Array:
		if name == "length" {
			return intType
		}
	}
	return anyType
}

func unary(x *ast.UnaryExpression, env map[string]inferred) inferred {
	switch x.Operator {
	case token.NOT, token.DELETE:
		return boolType
	case token.TYPEOF:
		return stringType
	case token.MINUS, token.PLUS, token.INCREMENT, token.DECREMENT:
		if t := typeOf(x.Operand, env); isNumber(t) && !t.nullable {
			return t
		}
		return floatType
	case token.BITWISE_NOT:
		return intType
	}
	return anyType
}

func binary(x *ast.BinaryExpression, env map[string]inferred) inferred {
	if x.Comparison {
		return boolType
	}
	switch x.Operator {
	case token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL, token.LESS, token.GREATER,
		token.LESS_OR_EQUAL, token.GREATER_OR_EQUAL, token.IN, token.INSTANCEOF:
		return boolType
	case token.LOGICAL_AND, token.LOGICAL_OR, token.COALESCE:
		return unify(typeOf(x.Left, env), typeOf(x.Right, env))
	}
	l, r := typeOf(x.Left, env), typeOf(x.Right, env)
	switch x.Operator {
	case token.PLUS:
		if l.t.Kind == schemas.String || r.t.Kind == schemas.String {
			return stringType
		}
		return arithmetic(l, r)
	case token.MINUS, token.MULTIPLY, token.REMAINDER, token.EXPONENT:
		return arithmetic(l, r)
	case token.SLASH:
		return floatType
	case token.AND, token.OR, token.EXCLUSIVE_OR, token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT:
		return intType
	}
	return anyType
}

// arithmetic is an integer when both operands are integers, else a float; an unknown
// operand may be a string that + concatenates.
func arithmetic(l, r inferred) inferred {
	switch {
	case l.t.Kind == schemas.Int64 && r.t.Kind == schemas.Int64 && !l.nullable && !r.nullable:
		return intType
	case isNumber(l) && isNumber(r):
		return floatType
	}
	return anyType
}

func isNumber(t inferred) bool { return t.t.Kind == schemas.Int64 || t.t.Kind == schemas.Float64 }

// stringMethods are the methods of String.prototype that return a string.
var stringMethods = map[string]bool{"toUpperCase": true, "toLowerCase": true, "trim": true, "trimStart": true,
	"trimEnd": true, "substring": true, "substr": true, "padStart": true, "padEnd": true, "repeat": true,
	"replace": true, "replaceAll": true, "charAt": true, "concat": true, "normalize": true, "toFixed": true,
	"toLocaleUpperCase": true, "toLocaleLowerCase": true}

// call types the calls of well-known functions and methods.
func call(x *ast.CallExpression, env map[string]inferred) inferred {
	switch f := x.Callee.(type) {
	case *ast.Identifier:
		switch f.Name {
		case "String":
			return stringType
		case "Boolean", "isNaN", "isFinite":
			return boolType
		case "Number", "parseFloat":
			return floatType
		}
	case *ast.DotExpression:
		name := string(f.Identifier.Name)
		if obj, ok := f.Left.(*ast.Identifier); ok {
			switch {
			case obj.Name == "Math":
				return floatType // also floor and round: NaN stays possible; output_type makes them integers
			case obj.Name == "JSON" && name == "stringify":
				return stringType
			}
		}
		switch {
		case stringMethods[name] && typeOf(f.Left, env).t.Kind == schemas.String:
			return stringType
		case name == "toString" || name == "join":
			return stringType
		case name == "startsWith" || name == "endsWith" || name == "includes":
			return boolType
		case name == "indexOf" || name == "lastIndexOf":
			return intType
		}
	}
	return anyType
}

// unify is the type of a value that is either a or b.
func unify(a, b inferred) inferred {
	n := a.nullable || b.nullable
	switch {
	case a.t.Kind == b.t.Kind && a.t.Kind != schemas.Array && a.t.Kind != schemas.Map && a.t.Kind != schemas.Struct:
		return inferred{t: a.t, nullable: n}
	case isNumber(a) && isNumber(b):
		return inferred{t: floatType.t, nullable: n}
	}
	return anyType
}
