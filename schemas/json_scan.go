package schemas

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast path of JSONDecoder.Decode: one pass over the bytes that checks the syntax and
// decodes straight into the row, driven by the decoder's plan, with no tree of values in
// between (fastjson's validator, parser and tree walk were three passes and most of the cost).
//
// It accepts a subset of what the checked path (DecodeChecked) accepts and yields the same row
// for it. Anything else gives up (ok false) and the record is decoded again by the checked
// path, which stays the reference for every error message and position: a syntax error, a
// value that does not fit its field, a raw control character in a string (the checked path's
// leniency), a lone surrogate escape, nesting deeper than maxScanDepth. A bad record costs a
// second decode (and a run of them pauses the fast path: scanMisses); the tests
// TestJSONScanAgreesWithChecked and FuzzJSONDecode hold the two paths together.

// maxScanDepth is the nesting the fast path decodes; deeper records (up to fastjson's 300
// levels) take the checked path.
const maxScanDepth = 64

// scanner reads JSON tokens from one record.
type scanner struct {
	in  []byte
	at  int    // the next byte to read
	esc []byte // the text of the last string that had escapes
}

// next skips whitespace and returns the byte at s.at, or 0 at the end (a NUL byte also reads
// as 0: it is never valid there).
func (s *scanner) next() byte {
	for s.at < len(s.in) {
		c := s.in[s.at]
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return c
		}
		s.at++
	}
	return 0
}

// literal consumes word (true, false, null) at s.at.
func (s *scanner) literal(word string) bool {
	if len(s.in)-s.at < len(word) || string(s.in[s.at:s.at+len(word)]) != word {
		return false
	}
	s.at += len(word)
	return true
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stringStops marks the bytes of w that end the plain run of a string: '"', '\\', control
// characters and the bytes of non-ASCII characters (checked as UTF-8 one by one). Borrows can
// mark bytes above a marked one, never below, so the lowest mark is exact.
func stringStops(w uint64) uint64 {
	quote := w ^ ('"' * ones)
	slash := w ^ ('\\' * ones)
	return ((w - 0x20*ones) | (quote - ones) | (slash - ones) | w) & highs
}

// str reads the string whose opening quote is at s.at and returns its text: a view of the
// input, or of s.esc when it had escapes, valid until the next string is read.
func (s *scanner) str() ([]byte, bool) {
	start := s.at + 1
	end, ok := s.plain(start)
	if !ok {
		return nil, false
	}
	if s.in[end] == '"' {
		s.at = end + 1
		return s.in[start:end], true
	}
	s.esc = append(s.esc[:0], s.in[start:end]...)
	return s.unescape(end)
}

// plain passes over the plain bytes of a string from i and returns the index of the '"' or
// '\\' that ends them; ok is false at a raw control character, invalid UTF-8 or the end of
// the input.
func (s *scanner) plain(i int) (int, bool) {
	in := s.in
	for {
		for i+8 <= len(in) {
			if m := stringStops(binary.LittleEndian.Uint64(in[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(in) {
			return i, false
		}
		switch c := in[i]; {
		case c == '"' || c == '\\':
			return i, true
		case c < 0x20:
			return i, false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && n == 1 {
				return i, false
			}
			i += n
		default:
			i++
		}
	}
}

// unescape goes on with a string at the backslash at i, writing its text to s.esc as fastjson
// does (surrogate pairs combined; a lone surrogate gives up).
func (s *scanner) unescape(i int) ([]byte, bool) {
	in := s.in
	for {
		if i+1 >= len(in) {
			return nil, false
		}
		i += 2
		switch e := in[i-1]; e {
		case '"', '\\', '/':
			s.esc = append(s.esc, e)
		case 'b':
			s.esc = append(s.esc, '\b')
		case 'f':
			s.esc = append(s.esc, '\f')
		case 'n':
			s.esc = append(s.esc, '\n')
		case 'r':
			s.esc = append(s.esc, '\r')
		case 't':
			s.esc = append(s.esc, '\t')
		case 'u':
			r, ok := hex4(in, i)
			if !ok {
				return nil, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(in, i+2)
				if r >= 0xdc00 || !ok || in[i] != '\\' || in[i+1] != 'u' || lo < 0xdc00 || lo > 0xdfff {
					return nil, false
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			s.esc = utf8.AppendRune(s.esc, r)
		default:
			return nil, false
		}
		end, ok := s.plain(i)
		if !ok {
			return nil, false
		}
		s.esc = append(s.esc, in[i:end]...)
		if in[end] == '"' {
			s.at = end + 1
			return s.esc, true
		}
		i = end
	}
}

// hex4 reads the four hex digits of a \u escape at in[i:].
func hex4(in []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			c = c | 0x20 - 'a' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// num reads the number at s.at and returns its text, checked against RFC 8259's grammar.
func (s *scanner) num() ([]byte, bool) {
	in, i := s.in, s.at
	digits := func() int {
		j := i
		for i < len(in) && isDigit(in[i]) {
			i++
		}
		return i - j
	}
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(in) && in[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(in) && in[i]|0x20 == 'e' {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	text := in[s.at:i]
	s.at = i
	return text, true
}

// skip checks and passes over the value at s.at, of a property the schema does not have.
func (s *scanner) skip(depth int) bool {
	switch c := s.next(); c {
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '[', '{':
		if depth >= maxScanDepth {
			return false
		}
		s.at++
		if s.next() == c+2 { // ']' and '}' follow '[' and '{' by two
			s.at++
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.keyText(); !ok {
					return false
				}
			}
			if !s.skip(depth + 1) {
				return false
			}
			switch s.next() {
			case ',':
				s.at++
			case c + 2:
				s.at++
				return true
			default:
				return false
			}
		}
	}
	_, ok := s.num()
	return ok
}

// keyText reads the key at s.at and its colon, and returns the key's text (valid until the
// next string is read).
func (s *scanner) keyText() ([]byte, bool) {
	if s.next() != '"' {
		return nil, false
	}
	k, ok := s.str()
	if !ok || s.next() != ':' {
		return nil, false
	}
	s.at++
	return k, true
}

// scan decodes data on the fast path; ok is false when the checked path must decide.
func (d *JSONDecoder) scan(data []byte) (Row, bool) {
	s := &d.sc
	s.in, s.at = data, 0
	var row Row
	if s.next() == '{' {
		row = make(Row, len(d.plan.fields))
		if !d.scanObject(d.plan, row, 1) || s.next() != 0 || s.at != len(data) {
			row = nil
		}
	}
	s.in = nil // the decoder does not keep the record
	return row, row != nil
}

// scanObject decodes the object at s.at into vals, by field position.
func (d *JSONDecoder) scanObject(p *decPlan, vals []any, depth int) bool {
	s := &d.sc
	s.at++ // '{'
	if s.next() == '}' {
		s.at++
	} else {
		next := 0 // records usually list fields in schema order: try the next one before hashing
		for {
			key, ok := s.keyText()
			if !ok {
				return false
			}
			i := -1
			if next < len(p.fields) && string(key) == p.fields[next].name {
				i = next
			} else if j, ok := p.index[string(key)]; ok {
				i = j
			}
			if i < 0 {
				if !s.skip(depth) {
					return false
				}
			} else {
				f := &p.fields[i]
				v, ok := d.scanValue(f.plan, depth)
				if !ok || v == nil && !f.nullable {
					return false
				}
				vals[i] = v
				next = i + 1
			}
			if c := s.next(); c == '}' {
				s.at++
				break
			} else if c != ',' {
				return false
			}
			s.at++
		}
	}
	for i := range p.fields {
		if vals[i] == nil && !p.fields[i].nullable {
			return false
		}
	}
	return true
}

// scanValue decodes the value at s.at as p's type.
func (d *JSONDecoder) scanValue(p *decPlan, depth int) (any, bool) {
	s := &d.sc
	c := s.next()
	if c == 'n' {
		return nil, s.literal("null")
	}
	switch p.t.Kind {
	case String:
		if c != '"' {
			return nil, false
		}
		text, ok := s.str()
		if !ok {
			return nil, false
		}
		return p.strs.get(bytesView(text)), true
	case Int64:
		text, ok := s.num()
		if !ok {
			return nil, false
		}
		if n, ok := parseIntLiteral(bytesView(text)); ok {
			return n, true
		}
		return d.convert(scalar{kind: sNumber, text: bytesView(text), borrowed: true}, p.t)
	case Float64:
		text, ok := s.num()
		if !ok {
			return nil, false
		}
		if f, ok := exactFloat(text); ok {
			return f, true
		}
		f, err := strconv.ParseFloat(bytesView(text), 64)
		return f, err == nil
	case Bool:
		if c == 't' {
			return true, s.literal("true")
		}
		return false, s.literal("false")
	case Array:
		return d.scanArray(p.elem, depth)
	case Struct:
		if c != '{' || depth >= maxScanDepth {
			return nil, false
		}
		vals := d.scratchFor(depth, len(p.fields))
		ok := d.scanObject(p, vals, depth+1)
		var m map[string]any
		if ok {
			m = make(map[string]any, len(p.fields))
			for i := range p.fields {
				m[p.fields[i].name] = vals[i]
			}
		}
		clear(vals)
		return m, ok
	case Map:
		return d.scanMap(depth, func() (any, bool) { return d.scanValue(p.elem, depth+1) })
	case Any:
		return d.scanAny(depth)
	}
	sc, ok := d.scanScalar(c)
	if !ok {
		return nil, false
	}
	return d.convert(sc, p.t)
}

// float64Pow10 are the powers of ten that float64 holds exactly.
var float64Pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat converts a JSON number without exponent and with at most 15 digits, such as
// 52.379189 or -0.5, as strconv.ParseFloat does: its digits and the power of ten are exact in
// a float64, so the one division rounds correctly. ok is false for other numbers.
func exactFloat(text []byte) (float64, bool) {
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var mant uint64
	digits, frac := 0, -1
	for _, c := range text {
		switch {
		case isDigit(c):
			mant = mant*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.':
			frac = 0
		default:
			return 0, false // an exponent
		}
	}
	if digits > 15 {
		return 0, false
	}
	f := float64(mant) / float64Pow10[max(frac, 0)]
	if neg {
		f = -f
	}
	return f, true
}

// scanScalar reads a string, number or boolean at s.at, which begins with c.
func (d *JSONDecoder) scanScalar(c byte) (scalar, bool) {
	s := &d.sc
	switch c {
	case '"':
		text, ok := s.str()
		return scalar{kind: sString, text: bytesView(text), borrowed: true}, ok
	case 't':
		return scalar{kind: sBool, b: true}, s.literal("true")
	case 'f':
		return scalar{kind: sBool}, s.literal("false")
	case '[', '{', 0:
		return scalar{}, false
	}
	text, ok := s.num()
	return scalar{kind: sNumber, text: bytesView(text), borrowed: true}, ok
}

func (d *JSONDecoder) convert(sc scalar, t *Type) (any, bool) {
	v, err := convertScalar(&sc, t)
	return v, err == nil
}

// scanArray decodes the array at s.at with elements of elem's type.
func (d *JSONDecoder) scanArray(elem *decPlan, depth int) (any, bool) {
	return d.scanItems(depth, func() (any, bool) { return d.scanValue(elem, depth+1) })
}

// scanItems decodes the array at s.at, each element with item.
func (d *JSONDecoder) scanItems(depth int, item func() (any, bool)) (any, bool) {
	s := &d.sc
	if s.next() != '[' || depth >= maxScanDepth {
		return nil, false
	}
	s.at++
	for len(d.items) <= depth {
		d.items = append(d.items, nil)
	}
	buf := d.items[depth][:0]
	ok := true
	if s.next() == ']' {
		s.at++
	} else {
		for ok {
			var v any
			v, ok = item()
			buf = append(buf, v)
			if c := s.next(); c == ']' {
				s.at++
				break
			} else if c != ',' {
				ok = false
			}
			s.at++
		}
	}
	var out []any
	if ok {
		out = append(make([]any, 0, len(buf)), buf...)
	}
	clear(buf)
	d.items[depth] = buf[:0]
	return out, ok
}

// scanMap decodes the object at s.at into a map, each value with value.
func (d *JSONDecoder) scanMap(depth int, value func() (any, bool)) (any, bool) {
	s := &d.sc
	if s.next() != '{' || depth >= maxScanDepth {
		return nil, false
	}
	s.at++
	m := map[string]any{}
	if s.next() == '}' {
		s.at++
		return m, true
	}
	for {
		k, ok := s.keyText()
		if !ok {
			return nil, false
		}
		key := string(k)
		v, ok := value()
		if !ok {
			return nil, false
		}
		m[key] = v
		if c := s.next(); c == '}' {
			s.at++
			return m, true
		} else if c != ',' {
			return nil, false
		}
		s.at++
	}
}

// scanAny decodes the value at s.at as plain values.
func (d *JSONDecoder) scanAny(depth int) (any, bool) {
	s := &d.sc
	switch c := s.next(); c {
	case 'n':
		return nil, s.literal("null")
	case '[':
		return d.scanItems(depth, func() (any, bool) { return d.scanAny(depth + 1) })
	case '{':
		return d.scanMap(depth, func() (any, bool) { return d.scanAny(depth + 1) })
	case '"':
		text, ok := s.str()
		return strings.Clone(bytesView(text)), ok
	default:
		sc, ok := d.scanScalar(c)
		if !ok {
			return nil, false
		}
		v, err := toAnyScalar(&sc)
		return v, err == nil
	}
}
