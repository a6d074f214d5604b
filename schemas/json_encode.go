package schemas

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// AppendJSON appends row, aligned with s, to dst as one JSON object with the fields in schema
// order, and returns the extended buffer. Null fields are written as null. Timestamps are RFC
// 3339 in UTC with trailing zero fractions trimmed, dates YYYY-MM-DD, bytes standard base64,
// decimals exact numbers with the type's scale, NaN and infinite floats null, map keys sorted.
// What it writes decodes back to the same row with a JSONDecoder of s, except for what JSON
// cannot hold: invalid UTF-8 in strings becomes U+FFFD, as with encoding/json, and NaN and
// infinite floats become null.
//
// A value whose Go type does not match its field's kind is written by what it holds, so a
// schema mismatch shows in the output rather than being dropped.
func AppendJSON(dst []byte, s *Schema, row Row) []byte {
	dst = append(dst, '{')
	for i := range s.Fields {
		f := &s.Fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, f.Name)
		dst = append(dst, ':')
		var v any
		if i < len(row) {
			v = row[i]
		}
		dst = appendValue(dst, &f.Type, v)
	}
	return append(dst, '}')
}

func appendValue(dst []byte, t *Type, v any) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case Bool:
		if b, ok := v.(bool); ok {
			return strconv.AppendBool(dst, b)
		}
	case Int64:
		if n, ok := v.(int64); ok {
			return strconv.AppendInt(dst, n, 10)
		}
	case Float64:
		if f, ok := v.(float64); ok {
			return appendFloat(dst, f)
		}
	case String:
		if str, ok := v.(string); ok {
			return appendString(dst, str)
		}
	case Timestamp:
		if ts, ok := v.(time.Time); ok {
			return appendTime(dst, ts, time.RFC3339Nano)
		}
	case Date:
		if ts, ok := v.(time.Time); ok {
			return appendTime(dst, ts, time.DateOnly)
		}
	case Decimal:
		if r, ok := v.(*big.Rat); ok && r != nil {
			return append(dst, r.FloatString(max(t.Scale, 0))...)
		}
	case Array:
		if items, ok := v.([]any); ok {
			elem := elemOf(t)
			dst = append(dst, '[')
			for i, item := range items {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, elem, item)
			}
			return append(dst, ']')
		}
	case Struct:
		if m, ok := v.(map[string]any); ok {
			dst = append(dst, '{')
			for i := range t.Fields {
				f := &t.Fields[i]
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, f.Name)
				dst = append(dst, ':')
				dst = appendValue(dst, &f.Type, m[f.Name])
			}
			return append(dst, '}')
		}
	case Map:
		if m, ok := v.(map[string]any); ok {
			return appendMap(dst, elemOf(t), m)
		}
	}
	return appendAny(dst, v)
}

// appendMap writes m with its keys sorted, so equal maps encode equally.
func appendMap(dst []byte, elem *Type, m map[string]any) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendValue(dst, elem, m[k])
	}
	return append(dst, '}')
}

// appendAny writes a value by its Go type: the values of an Any field, and anything that does
// not match its field's kind.
func appendAny(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return appendFloat(dst, x)
	case string:
		return appendString(dst, x)
	case []any:
		return appendValue(dst, &Type{Kind: Array, Elem: &anyType}, x)
	case map[string]any:
		return appendMap(dst, &anyType, x)
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, x)
		return append(dst, '"')
	case time.Time:
		return appendTime(dst, x, time.RFC3339Nano)
	case *big.Rat:
		if x == nil {
			return append(dst, "null"...)
		}
		if x.IsInt() {
			return append(dst, x.Num().String()...)
		}
		f, _ := x.Float64()
		return appendFloat(dst, f)
	case json.Number:
		if isJSONNumber(string(x)) {
			return append(dst, x...)
		}
		return appendString(dst, string(x))
	}
	sc := toScalar(v)
	switch sc.kind {
	case sInt:
		return strconv.AppendInt(dst, sc.i, 10)
	case sFloat:
		return appendFloat(dst, sc.f)
	case sNumber:
		return append(dst, sc.text...)
	}
	// Not a value a Row holds: write what it prints as rather than lose it.
	return appendString(dst, fmt.Sprint(v))
}

func appendTime(dst []byte, t time.Time, layout string) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, layout)
	return append(dst, '"')
}

// appendFloat writes the shortest text that reads back as f: plain decimals for ordinary
// magnitudes, exponents for tiny and huge ones. NaN and infinities, which JSON cannot hold,
// are written as null.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(dst, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// plainRun returns how many bytes at the start of s, tested 8 at a time, are printable ASCII
// that JSON takes as they are (no '"', '\\', control or non-ASCII byte): strings are mostly
// that, and a word costs a few instructions where a byte loop costs a branch per byte.
func plainRun(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only: one load per word
	n := 0
	for ; n+8 <= len(b); n += 8 {
		if !plainWord(binary.LittleEndian.Uint64(b[n:])) {
			return n
		}
	}
	return n
}

// plainWord reports whether none of the 8 bytes of w is below 0x20, '"', '\\' or non-ASCII:
// each of those sets its byte's high bit in special ('"' and '\\' as zero bytes after the
// XOR; borrows only make bytes above a special one look special too).
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	special := (w - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash | w
	return special&highs == 0
}

// appendString writes s as a JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD, and U+2028 and U+2029 escaped so the output is also safe
// inside JavaScript. HTML characters are left alone.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i += plainRun(s[i:])
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
