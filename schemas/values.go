package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldError is the error for a value that does not fit the type of its field. Path names the
// field: nested fields are joined with ".", array elements are written "[i]". Path is empty
// when the value itself, not one of its fields, is wrong (Coerce of a scalar).
type FieldError struct {
	Path string
	Err  error
}

// Error renders the error as `field "user.age": want an integer, got string "x"`.
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("field %q: %v", e.Path, e.Err)
}

// Unwrap returns the reason.
func (e *FieldError) Unwrap() error { return e.Err }

// inField prefixes the path of err (a *FieldError from a nested value, or a plain reason) with
// the field name seg. Array indexes are passed as "[i]".
func inField(err error, seg string) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return &FieldError{Path: seg, Err: err}
	}
	switch {
	case fe.Path == "":
		fe.Path = seg
	case fe.Path[0] == '[':
		fe.Path = seg + fe.Path
	default:
		fe.Path = seg + "." + fe.Path
	}
	return fe
}

func inIndex(err error, i int) error { return inField(err, "["+strconv.Itoa(i)+"]") }

// errNotNullable is the reason for a missing value in a field that is not nullable.
var errNotNullable = errors.New("missing, and the field is not nullable")

// scalarKind tells what a scalar holds.
type scalarKind uint8

const (
	sNull   scalarKind = iota
	sBool              // b
	sNumber            // text: a JSON number literal (JSON input, json.Number)
	sInt               // i: a Go integer
	sFloat             // f: a Go float
	sString            // text
	sTime              // tm
	sBytes             // raw
	sRat               // rat
	sArray             // only described, converted by the caller
	sObject            // only described, converted by the caller
)

// scalar is one input value, whatever it came from: a JSON token (Decode) or a Go value
// (Coerce). Both convert it to a field's representation with convertScalar, so they accept
// and reject the same inputs with the same messages.
type scalar struct {
	kind scalarKind
	b    bool
	i    int64
	f    float64
	text string
	// borrowed says text points into a buffer that is reused: copy it before keeping it.
	borrowed bool
	tm       time.Time
	raw      []byte
	rat      *big.Rat
}

// wantNoun is how an error message names what a kind accepts.
func wantNoun(t *Type) string {
	switch t.Kind {
	case Bool:
		return "a boolean"
	case Int64:
		return "an integer"
	case Float64:
		return "a number"
	case String:
		return "a string"
	case Bytes:
		return "a base64 string"
	case Timestamp:
		return "a timestamp (RFC 3339 string or epoch seconds)"
	case Date:
		return "a date (YYYY-MM-DD)"
	case Decimal:
		return t.String()
	case Array:
		return "an array"
	case Struct, Map:
		return "an object"
	}
	return "a JSON value"
}

// describe renders the value for an error message: `string "abc"`, `number 1.5`, `null`.
func (sc *scalar) describe() string {
	switch sc.kind {
	case sNull:
		return "null"
	case sBool:
		return "boolean " + strconv.FormatBool(sc.b)
	case sNumber:
		return "number " + clip(sc.text)
	case sInt:
		return "number " + strconv.FormatInt(sc.i, 10)
	case sFloat:
		return "number " + strconv.FormatFloat(sc.f, 'g', -1, 64)
	case sString:
		return "string " + strconv.Quote(clip(sc.text))
	case sTime:
		return "timestamp " + sc.tm.Format(time.RFC3339Nano)
	case sBytes:
		return "bytes"
	case sRat:
		return "number " + sc.rat.RatString()
	case sArray:
		return "array"
	}
	return "object"
}

// clip shortens s for an error message.
func clip(s string) string { return Clip(s, 64, "...") }

// Clip cuts s to at most limit bytes on a rune boundary, adding more when it cut.
func Clip(s string, limit int, more string) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// mismatch is the reason for a value of the wrong type; detail, when given, says more.
func mismatch(t *Type, sc *scalar, detail string) error {
	if detail != "" {
		return fmt.Errorf("want %s, got %s, %s", wantNoun(t), sc.describe(), detail)
	}
	return fmt.Errorf("want %s, got %s", wantNoun(t), sc.describe())
}

const (
	detailRange    = "which is out of range"
	detailFraction = "which is not a whole number"
	detailYears    = "which is outside the years 0000 to 9999"
)

// convertScalar converts sc to the representation of t, a kind other than Array, Struct and
// Map. A null yields nil: the caller decides whether null is allowed.
func convertScalar(sc *scalar, t *Type) (any, error) {
	if sc.kind == sNull {
		return nil, nil
	}
	if sc.kind == sNumber && !isJSONNumber(sc.text) {
		return nil, fmt.Errorf("invalid number %q", clip(sc.text))
	}
	switch t.Kind {
	case Bool:
		if sc.kind == sBool {
			return sc.b, nil
		}
	case Int64:
		return toInt64(sc, t)
	case Float64:
		return toFloat64(sc, t)
	case String:
		if sc.kind == sString {
			if sc.borrowed {
				return strings.Clone(sc.text), nil
			}
			return sc.text, nil
		}
	case Bytes:
		switch sc.kind {
		case sString:
			if b, ok := decodeBase64(sc.text); ok {
				return b, nil
			}
		case sBytes:
			return sc.raw, nil
		}
	case Timestamp:
		return toTimestamp(sc, t)
	case Date:
		return toDate(sc, t)
	case Decimal:
		return toDecimal(sc, t)
	case Any:
		return toAnyScalar(sc)
	}
	return nil, mismatch(t, sc, "")
}

func toInt64(sc *scalar, t *Type) (any, error) {
	switch sc.kind {
	case sInt:
		return sc.i, nil
	case sNumber:
		if n, ok := parseIntLiteral(sc.text); ok {
			return n, nil
		}
		d := parseDecNum(sc.text)
		n, err := d.int64()
		if err != "" {
			return nil, mismatch(t, sc, err)
		}
		return n, nil
	case sFloat:
		if n, ok := intFromFloat(sc.f); ok {
			return n, nil
		}
		if sc.f != math.Trunc(sc.f) {
			return nil, mismatch(t, sc, detailFraction)
		}
		return nil, mismatch(t, sc, detailRange)
	case sRat:
		if !sc.rat.IsInt() {
			return nil, mismatch(t, sc, detailFraction)
		}
		if !sc.rat.Num().IsInt64() {
			return nil, mismatch(t, sc, detailRange)
		}
		return sc.rat.Num().Int64(), nil
	}
	return nil, mismatch(t, sc, "")
}

func toFloat64(sc *scalar, t *Type) (any, error) {
	switch sc.kind {
	case sInt:
		return float64(sc.i), nil
	case sNumber:
		f, err := strconv.ParseFloat(sc.text, 64)
		if err != nil {
			return nil, mismatch(t, sc, detailRange)
		}
		return f, nil
	case sFloat:
		if math.IsNaN(sc.f) || math.IsInf(sc.f, 0) {
			return nil, mismatch(t, sc, "which JSON cannot hold")
		}
		return sc.f, nil
	case sRat:
		f, _ := sc.rat.Float64()
		if math.IsInf(f, 0) {
			return nil, mismatch(t, sc, detailRange)
		}
		return f, nil
	}
	return nil, mismatch(t, sc, "")
}

// Timestamps are limited to the years RFC 3339 can write.
var (
	minTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

func toTimestamp(sc *scalar, t *Type) (any, error) {
	var (
		ts time.Time
		ok bool
	)
	switch sc.kind {
	case sString:
		var err error
		if ts, err = time.Parse(time.RFC3339Nano, sc.text); err != nil {
			return nil, mismatch(t, sc, "")
		}
		ok = true
	case sNumber:
		ts, ok = parseDecNum(sc.text).seconds()
	case sInt:
		ts, ok = parseDecNum(strconv.FormatInt(sc.i, 10)).seconds()
	case sFloat:
		// The shortest decimal form is what the user wrote (1700000000.123), so
		// going through it gives exact milliseconds where float arithmetic would not.
		ts, ok = parseDecNum(strconv.FormatFloat(sc.f, 'e', -1, 64)).seconds()
	case sTime:
		ts, ok = sc.tm, true
	default:
		return nil, mismatch(t, sc, "")
	}
	ts = ts.UTC()
	if !ok || ts.Before(minTime) || ts.After(maxTime) {
		return nil, mismatch(t, sc, detailYears)
	}
	return ts, nil
}

func toDate(sc *scalar, t *Type) (any, error) {
	switch sc.kind {
	case sString:
		d, err := time.Parse(time.DateOnly, sc.text)
		if err != nil {
			return nil, mismatch(t, sc, "")
		}
		return d, nil
	case sTime:
		if h, m, s := sc.tm.Clock(); h != 0 || m != 0 || s != 0 || sc.tm.Nanosecond() != 0 {
			return nil, mismatch(t, sc, "which has a time of day")
		}
		y, mo, d := sc.tm.Date()
		if y < 0 || y > 9999 {
			return nil, mismatch(t, sc, detailYears)
		}
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC), nil
	}
	return nil, mismatch(t, sc, "")
}

func toDecimal(sc *scalar, t *Type) (any, error) {
	var d decNum
	switch sc.kind {
	case sNumber:
		d = parseDecNum(sc.text)
	case sString:
		if !isJSONNumber(sc.text) {
			return nil, mismatch(t, sc, "")
		}
		d = parseDecNum(sc.text)
	case sInt:
		d = parseDecNum(strconv.FormatInt(sc.i, 10))
	case sFloat:
		if math.IsNaN(sc.f) || math.IsInf(sc.f, 0) {
			return nil, mismatch(t, sc, "")
		}
		d = parseDecNum(strconv.FormatFloat(sc.f, 'e', -1, 64))
	case sRat:
		// A rational is exact only if its denominator is a power of ten within the scale.
		scaled := new(big.Rat).Mul(sc.rat, new(big.Rat).SetInt(pow10(t.Scale)))
		if !scaled.IsInt() {
			return nil, mismatch(t, sc, fmt.Sprintf("which has more than %d decimal places", t.Scale))
		}
		d = parseDecNum(scaled.Num().String())
		d.exp -= t.Scale
		if d.digits == "" {
			d.exp = 0
		}
	default:
		return nil, mismatch(t, sc, "")
	}
	r, detail := d.rat(t.Precision, t.Scale)
	if detail != "" {
		return nil, mismatch(t, sc, detail)
	}
	return r, nil
}

// toAnyScalar converts to the plain values of an Any field: numbers become int64 when whole
// and within range, float64 otherwise.
func toAnyScalar(sc *scalar) (any, error) {
	switch sc.kind {
	case sBool:
		return sc.b, nil
	case sInt:
		return sc.i, nil
	case sNumber:
		if n, ok := parseIntLiteral(sc.text); ok {
			return n, nil
		}
		f, err := strconv.ParseFloat(sc.text, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", clip(sc.text))
		}
		return anyFloat(f), nil
	case sFloat:
		if math.IsNaN(sc.f) || math.IsInf(sc.f, 0) {
			return nil, fmt.Errorf("number %v cannot be held in JSON", sc.f)
		}
		return anyFloat(sc.f), nil
	case sString:
		if sc.borrowed {
			return strings.Clone(sc.text), nil
		}
		return sc.text, nil
	case sTime:
		return sc.tm.UTC().Format(time.RFC3339Nano), nil
	case sBytes:
		return base64.StdEncoding.EncodeToString(sc.raw), nil
	case sRat:
		if sc.rat.IsInt() && sc.rat.Num().IsInt64() {
			return sc.rat.Num().Int64(), nil
		}
		f, _ := sc.rat.Float64()
		return f, nil
	}
	return nil, nil
}

// anyFloat returns f as int64 when it is a whole number within range.
func anyFloat(f float64) any {
	if n, ok := intFromFloat(f); ok {
		return n
	}
	return f
}

// intFromFloat returns f as an int64 when it is a whole number within range.
func intFromFloat(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// decodeBase64 accepts standard and URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// isJSONNumber reports whether s is a number as RFC 8259 writes it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseIntLiteral parses a valid JSON number without fraction or exponent that fits an int64.
func parseIntLiteral(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// decNum is a valid JSON number split into its significant digits and a power of ten:
// value = ±digits × 10^exp. digits has no leading or trailing zeros and is empty for zero, so
// huge exponents cost nothing until a caller bounds them.
type decNum struct {
	neg    bool
	digits string
	exp    int
}

// maxExp bounds exponents so arithmetic on them cannot overflow; any larger one is out of
// range for every use anyway.
const maxExp = 1 << 20

// parseDecNum splits s, which must satisfy isJSONNumber.
func parseDecNum(s string) decNum {
	var d decNum
	if s != "" && s[0] == '-' {
		d.neg = true
		s = s[1:]
	}
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	d.exp = -len(frac)
	if trimmed := strings.TrimRight(digits, "0"); trimmed != digits {
		d.exp += len(digits) - len(trimmed)
		digits = trimmed
	}
	d.digits = digits
	if digits == "" {
		d.neg, d.exp = false, 0
		return d
	}
	if expText != "" {
		e, err := strconv.Atoi(expText)
		if err != nil || e > maxExp || e < -maxExp {
			e = maxExp
			if strings.HasPrefix(expText, "-") {
				e = -maxExp
			}
		}
		d.exp += e
	}
	return d
}

// int64 returns the number as an int64, or why it is not one.
func (d decNum) int64() (int64, string) {
	if d.exp < 0 {
		return 0, detailFraction
	}
	if len(d.digits)+d.exp > 19 {
		return 0, detailRange
	}
	s := d.digits + strings.Repeat("0", d.exp)
	if d.neg {
		s = "-" + s
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, detailRange
	}
	return n, ""
}

// seconds returns the number as seconds since the Unix epoch, exact to the nanosecond
// (further digits are truncated).
func (d decNum) seconds() (time.Time, bool) {
	intLen := len(d.digits) + d.exp // digits before the decimal point
	if intLen > 12 {                // beyond year 9999 either way
		return time.Time{}, false
	}
	var secText, fracText string
	switch {
	case d.exp >= 0:
		secText = d.digits + strings.Repeat("0", d.exp)
	case intLen > 0:
		secText, fracText = d.digits[:intLen], d.digits[intLen:]
	case intLen > -9:
		fracText = strings.Repeat("0", -intLen) + d.digits
	}
	var sec, nsec int64
	if secText != "" {
		sec, _ = strconv.ParseInt(secText, 10, 64)
	}
	if fracText != "" {
		fracText = (fracText + "000000000")[:9]
		nsec, _ = strconv.ParseInt(fracText, 10, 64)
	}
	if d.neg {
		sec, nsec = -sec, -nsec
	}
	return time.Unix(sec, nsec), true
}

// maxDecimalDigits bounds decimals of unknown precision.
const maxDecimalDigits = 1000

// rat returns the number as an exact rational, or why it does not fit decimal(precision,
// scale). A precision of 0 means unbounded.
func (d decNum) rat(precision, scale int) (*big.Rat, string) {
	if d.digits == "" {
		return new(big.Rat), ""
	}
	if -d.exp > scale {
		return nil, fmt.Sprintf("which has more than %d decimal places", scale)
	}
	intDigits := len(d.digits) + d.exp
	if precision > 0 && intDigits > precision-scale {
		return nil, fmt.Sprintf("which has more than %d digits before the decimal point", precision-scale)
	}
	if intDigits > maxDecimalDigits {
		return nil, detailRange
	}
	n, _ := new(big.Int).SetString(d.digits, 10)
	if d.neg {
		n.Neg(n)
	}
	r := new(big.Rat)
	if d.exp >= 0 {
		return r.SetInt(n.Mul(n, pow10(d.exp))), ""
	}
	return r.SetFrac(n, pow10(-d.exp)), ""
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
