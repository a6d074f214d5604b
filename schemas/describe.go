package schemas

import (
	"fmt"
	"math/big"
	"strconv"
	"time"
)

// KindOf returns the kind whose row representation v is: int and int32 are Int64, float32 is
// Float64, a map[string]any is a Struct (a Map's values look the same), a time.Time a
// Timestamp; nil and other types are Any.
func KindOf(v any) Kind {
	switch v.(type) {
	case bool:
		return Bool
	case int64, int, int32:
		return Int64
	case float64, float32:
		return Float64
	case string:
		return String
	case []byte:
		return Bytes
	case time.Time:
		return Timestamp
	case *big.Rat:
		return Decimal
	case []any:
		return Array
	case map[string]any:
		return Struct
	}
	return Any
}

// Describe names a row value in a message, with its kind where the value alone does not say
// it: null, the string "x", the value 3, the value true, the timestamp 2024-05-01T12:00:00Z,
// the decimal 1.25, 3 bytes, an array of 2 values, a struct of 4 fields. Long values are cut
// (Literal).
func Describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + Literal(v)
	case time.Time:
		return "the timestamp " + Literal(v)
	case *big.Rat:
		return "the decimal " + Literal(v)
	case []byte, []any, map[string]any:
		return Literal(v)
	}
	return "the value " + Literal(v)
}

// maxLiteral is how much of a value Literal shows.
const maxLiteral = 64

// Literal writes a row value as a message quotes it after a word that names its kind (a
// column's type, say): strings quoted, times in RFC 3339, decimals in decimal notation when
// their expansion is finite, bytes and containers by their size; cut after 64 bytes.
func Literal(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > maxLiteral {
			return strconv.Quote(x[:maxLiteral]) + "..."
		}
		return strconv.Quote(x)
	case []byte:
		return fmt.Sprintf("%d bytes", len(x))
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case *big.Rat:
		s = decimalString(x)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		return fmt.Sprintf("an array of %d values", len(x))
	case map[string]any:
		return fmt.Sprintf("a struct of %d fields", len(x))
	default:
		s = fmt.Sprint(v)
	}
	if len(s) > maxLiteral {
		s = s[:maxLiteral] + "..."
	}
	return s
}

// decimalString renders r in decimal when it has a finite expansion (of at most 80 digits).
func decimalString(r *big.Rat) string {
	if r == nil {
		return "null"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	p := new(big.Rat).Set(r)
	for digits := 1; digits <= 80; digits++ {
		if p.Mul(p, big.NewRat(10, 1)).IsInt() {
			return r.FloatString(digits)
		}
	}
	return r.RatString()
}
