package schemas

import (
	"fmt"
	"math/big"
	"time"
)

// ValueKind names the kind of a row value for error messages, as Kind.String names a type's
// ("integer", "struct", ...); a value of no kind is named by its Go type. A time.Time is a
// "timestamp" and a map[string]any a "struct": a value alone cannot tell a date or a map.
func ValueKind(v any) string {
	switch v.(type) {
	case bool:
		return Bool.String()
	case int64, int, int32:
		return Int64.String()
	case float64, float32:
		return Float64.String()
	case string:
		return String.String()
	case []byte:
		return Bytes.String()
	case time.Time:
		return Timestamp.String()
	case *big.Rat:
		return Decimal.String()
	case []any:
		return Array.String()
	case map[string]any:
		return Struct.String()
	}
	return fmt.Sprintf("%T", v)
}
