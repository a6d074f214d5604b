package expr

import (
	"math/big"
	"time"

	"github.com/expr-lang/expr/types"
	"github.com/sluicehq/sluice/schemas"
)

// envTypes describes the variables an expression sees for a schema: one per field.
func envTypes(s *schemas.Schema) types.Map {
	m := make(types.Map, len(s.Fields))
	for _, f := range s.Fields {
		m[f.Name] = exprType(f.Type, true)
	}
	return m
}

var timeType = types.TypeOf(time.Time{})

// exprType is the expr-lang type of values of t. Top-level bytes and decimals are converted
// when they are bound (to string and float64, see bindValue); nested ones are not, so they
// are left untyped there.
func exprType(t schemas.Type, top bool) types.Type {
	switch t.Kind {
	case schemas.Bool:
		return types.Bool
	case schemas.Int64:
		return types.Int64
	case schemas.Float64:
		return types.Float64
	case schemas.String:
		return types.String
	case schemas.Bytes:
		if top {
			return types.String
		}
	case schemas.Decimal:
		if top {
			return types.Float64
		}
	case schemas.Timestamp, schemas.Date:
		return timeType
	case schemas.Array:
		if t.Elem == nil {
			return types.Array(types.Any)
		}
		return types.Array(exprType(*t.Elem, false))
	case schemas.Struct:
		m := make(types.Map, len(t.Fields))
		for _, f := range t.Fields {
			m[f.Name] = exprType(f.Type, false)
		}
		return m
	case schemas.Map:
		if t.Elem == nil {
			return types.Map{types.Extra: types.Any}
		}
		return types.Map{types.Extra: exprType(*t.Elem, false)}
	}
	return types.Any
}

// exprSchemaType is the schema type of what an expression reads from a field of type t:
// the field's type, except for the top-level conversions of bindValue.
func exprSchemaType(t schemas.Type) schemas.Type {
	switch t.Kind {
	case schemas.Bytes:
		return schemas.Type{Kind: schemas.String}
	case schemas.Decimal:
		return schemas.Type{Kind: schemas.Float64}
	}
	return t
}

// bindValue converts a row value of kind k into what expressions see: bytes read as text and
// decimals as float64, so that string functions and arithmetic apply to them.
func bindValue(k schemas.Kind, v any) any {
	switch k {
	case schemas.Bytes:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case schemas.Decimal:
		if r, ok := v.(*big.Rat); ok && r != nil {
			f, _ := r.Float64()
			return f
		}
	}
	return v
}
