package expr

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/sluicehq/sluice/schemas"
)

// Errors for a zero divisor; they fail the row, as in Beam, instead of yielding +Inf.
var (
	ErrDivisionByZero = errors.New("division by zero")
	ErrModuloByZero   = errors.New("modulo by zero")
)

// Names of the functions the divide patch calls; the leading underscore keeps them out of
// the way of field names.
const (
	fnDivisor = "_divisor"
	fnModulus = "_modulus"
	fnPyMod   = "_pymod"
)

func isZero(v any) bool {
	switch x := v.(type) {
	case int:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case int32:
		return x == 0
	case float32:
		return x == 0
	case uint, uint8, uint16, uint32, uint64, int8, int16:
		return reflect.ValueOf(x).IsZero()
	}
	return false
}

// nonZero returns a function that passes its argument through, or fails with err when the
// argument is zero. Its type is its argument's.
func nonZero(name string, err error) *builtin.Function {
	return &builtin.Function{
		Name: name,
		Func: func(args ...any) (any, error) {
			if isZero(args[0]) {
				return nil, err
			}
			return args[0], nil
		},
		Validate: func(args []reflect.Type) (reflect.Type, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("%s takes one argument", name)
			}
			return args[0], nil
		},
	}
}

// pyMod is Python's %: the result has the sign of the divisor.
var pyMod = &builtin.Function{
	Name: fnPyMod,
	Func: func(args ...any) (any, error) {
		a, b := args[0], args[1]
		if isZero(b) {
			return nil, ErrModuloByZero
		}
		ai, aInt := toInt(a)
		bi, bInt := toInt(b)
		if aInt && bInt {
			m := ai % bi
			if m != 0 && (m < 0) != (bi < 0) {
				m += bi
			}
			return m, nil
		}
		af, aok := toFloat(a)
		bf, bok := toFloat(b)
		if !aok || !bok {
			return nil, fmt.Errorf("invalid operation: %s %% %s", schemas.Describe(normalizeDeep(a)), schemas.Describe(normalizeDeep(b)))
		}
		m := math.Mod(af, bf)
		if m != 0 && (m < 0) != (bf < 0) {
			m += bf
		}
		return m, nil
	},
	Validate: func(args []reflect.Type) (reflect.Type, error) {
		if len(args) != 2 {
			return nil, errors.New("% takes two operands")
		}
		allInt := true
		for _, a := range args {
			switch a.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			case reflect.Float32, reflect.Float64:
				allInt = false
			case reflect.Interface:
				return a, nil
			default:
				return nil, fmt.Errorf("invalid operation: %% (mismatched types %s and %s)", args[0], args[1])
			}
		}
		if allInt {
			return reflect.TypeFor[int64](), nil
		}
		return reflect.TypeFor[float64](), nil
	},
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// withFunctions adds the functions the patch calls.
func withFunctions(c *conf.Config) {
	for _, f := range []*builtin.Function{nonZero(fnDivisor, ErrDivisionByZero), nonZero(fnModulus, ErrModuloByZero), pyMod, maybeNull} {
		c.Functions[f.Name] = f
	}
}

// divisionPatch makes a zero divisor an error: a / b becomes a / _divisor(b) and a % b
// becomes a % _modulus(b) (or _pymod(a, b) for Python). Non-zero literal divisors are left
// alone.
type divisionPatch struct{ python bool }

func (p divisionPatch) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok || (b.Operator != "/" && b.Operator != "%") {
		return
	}
	if p.python && b.Operator == "%" {
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fnPyMod}, Arguments: []ast.Node{b.Left, b.Right}}
		ast.Patch(n, call)
		return
	}
	if nonZeroLiteral(b.Right) || isCallTo(b.Right, fnDivisor, fnModulus) {
		return
	}
	name := fnDivisor
	if b.Operator == "%" {
		name = fnModulus
	}
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: name}, Arguments: []ast.Node{b.Right}}
	call.SetLocation(b.Location())
	b.Right = call
}

func nonZeroLiteral(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.IntegerNode:
		return n.Value != 0
	case *ast.FloatNode:
		return n.Value != 0
	}
	return false
}

func isCallTo(n ast.Node, names ...string) bool {
	c, ok := n.(*ast.CallNode)
	if !ok {
		return false
	}
	id, ok := c.Callee.(*ast.IdentifierNode)
	if !ok {
		return false
	}
	for _, name := range names {
		if id.Value == name {
			return true
		}
	}
	return false
}

// zeroLiteralDivisor finds a division or modulo by a literal zero, an error in every row.
func zeroLiteralDivisor(tree ast.Node) error {
	var err error
	ast.Find(tree, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryNode)
		if !ok || (b.Operator != "/" && b.Operator != "%") {
			return false
		}
		zero := false
		switch r := b.Right.(type) {
		case *ast.IntegerNode:
			zero = r.Value == 0
		case *ast.FloatNode:
			zero = r.Value == 0
		}
		if zero {
			e := ErrDivisionByZero
			if b.Operator == "%" {
				e = ErrModuloByZero
			}
			err = &sourceError{offset: b.Location().From, msg: e.Error()}
		}
		return zero
	})
	return err
}
