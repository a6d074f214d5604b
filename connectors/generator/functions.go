package generator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// function is a template function: its argument counts and how a call compiles.
type function struct {
	name     string
	min, max int // numbers of arguments; max < 0: any number
	compile  func(c *call) (renderFunc, error)
	// stateful functions (get) depend on what the message rendered before them, so their
	// calls are not tried out at compile time.
	stateful bool
}

func (f *function) arity() string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case f.max < 0:
		return "at least " + plural(f.min)
	case f.max == 0:
		return "no arguments"
	case f.min == f.max:
		return plural(f.min)
	}
	return fmt.Sprintf("%d to %s", f.min, plural(f.max))
}

// functions are the template functions by name; aliases share an entry.
var functions = map[string]*function{}

// unsupported are functions of the JSON Data Generator that sluice knows but does not offer.
var unsupported = map[string]string{
	"repeat":         "sluice renders one message per template, so arrays have the shape the template writes",
	"resetIndex":     "it only matters with repeat(), which sluice does not offer; index() is the message's offset",
	"countryList":    "use country() for one country name",
	"regexify":       "write the value with alpha(), alphaNumeric(), integer() and concat()",
	"systemProperty": "the generator does not read the environment",
}

func def(min, max int, compile func(*call) (renderFunc, error), names ...string) *function {
	f := &function{name: names[0], min: min, max: max, compile: compile}
	for _, n := range names {
		if _, dup := functions[n]; dup {
			panic("generator: function defined twice: " + n)
		}
		functions[n] = f
	}
	return f
}

func init() {
	def(2, 2, intRange, "integer", "long")
	def(2, 3, floatRange(32), "float", "floating")
	def(2, 3, floatRange(64), "double")
	def(0, 1, uuidFn, "uuid", "guid")
	def(0, 1, hexFn, "hex")
	def(0, 0, func(*call) (renderFunc, error) { return randomHex(12), nil }, "objectId")
	def(0, 1, boolFn, "bool")
	def(0, 2, indexFn, "index")
	def(2, 2, loremFn, "lorem")
	def(0, 0, digits("###-###-####"), "phone")
	def(0, 0, digits("###-##-####"), "ssn")
	def(0, 0, pick(genders), "gender")
	def(0, 0, pick(countries), "country")
	def(0, 0, pick(cities), "city")
	def(0, 0, pick(states), "state")
	def(0, 0, pick(firstNames), "firstName")
	def(0, 0, pick(lastNames), "lastName", "surname")
	def(0, 0, companyFn, "company")
	def(0, 0, streetFn, "street")
	def(0, 0, usernameFn, "username")
	def(0, 1, emailFn, "email")
	def(0, 0, ipv4Fn, "ipv4")
	def(0, 1, ipv6Fn, "ipv6")
	def(1, -1, concatFn, "concat")
	def(2, 3, substringFn, "substring")
	def(1, -1, randomFn, "random")
	def(0, 2, chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), "alpha")
	def(0, 2, chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), "alphaNumeric")
	def(1, 1, mapText(strings.ToLower), "toLowerCase")
	def(1, 1, mapText(strings.ToUpper), "toUpperCase")
	def(2, 2, putFn, "put")
	def(1, 1, getFn, "get").stateful = true
	defineTimeFunctions()
}

// functionNames returns the names of the functions, sorted.
func functionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Limits that keep one message small whatever the template says.
const (
	maxLength = 1 << 16 // alpha, alphaNumeric, hex
	maxLorem  = 1000    // lorem words or paragraphs
)

// The compiled forms of arguments: a literal is converted once, a nested call every message.
type (
	intArg   func(*state) (int64, error)
	floatArg func(*state) (float64, error)
	textArg  func(*state) (string, error)
)

func intOf(a *arg) (intArg, error) {
	parse := func(s string) (int64, error) {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, a.errorf("%q is not a whole number", s)
		}
		return v, nil
	}
	if a.call == nil {
		v, err := parse(a.text)
		if err != nil {
			return nil, err
		}
		return func(*state) (int64, error) { return v, nil }, nil
	}
	return func(st *state) (int64, error) {
		s, err := a.eval(st)
		if err != nil {
			return 0, err
		}
		return parse(s)
	}, nil
}

func floatOf(a *arg) (floatArg, error) {
	parse := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, a.errorf("%q is not a finite number", s)
		}
		return v, nil
	}
	if a.call == nil {
		v, err := parse(a.text)
		if err != nil {
			return nil, err
		}
		return func(*state) (float64, error) { return v, nil }, nil
	}
	return func(st *state) (float64, error) {
		s, err := a.eval(st)
		if err != nil {
			return 0, err
		}
		return parse(s)
	}, nil
}

func textOf(a *arg) textArg {
	if a.call == nil {
		return func(*state) (string, error) { return a.text, nil }
	}
	return a.eval
}

// countOf is intOf for a length or count between 0 and limit.
func countOf(a *arg, limit int64) (intArg, error) {
	f, err := intOf(a)
	if err != nil {
		return nil, err
	}
	return func(st *state) (int64, error) {
		n, err := f(st)
		if err == nil && (n < 0 || n > limit) {
			err = a.errorf("%d is out of range: it must be 0 to %d", n, limit)
		}
		return n, err
	}, nil
}

// literal returns the text of an argument that must be written out, such as a format.
func literal(a *arg, what string) (string, error) {
	if a.call != nil {
		return "", a.errorf("%s must be written out, not computed by %s()", what, a.call.name)
	}
	return a.text, nil
}

// appendArg appends an argument's value to dst: a nested call renders straight into it.
func appendArg(st *state, dst []byte, a *arg) ([]byte, error) {
	if a.call == nil {
		return append(dst, a.text...), nil
	}
	return a.call.render(st, dst)
}

// bounds returns an argument pair's values, checking that the first is not greater.
func bounds[T int64 | float64](st *state, lo, hi func(*state) (T, error), at *arg) (T, T, error) {
	a, err := lo(st)
	if err != nil {
		return 0, 0, err
	}
	b, err := hi(st)
	if err != nil {
		return 0, 0, err
	}
	if a > b {
		return 0, 0, at.errorf("the minimum %v is greater than the maximum %v", a, b)
	}
	return a, b, nil
}

// randInt returns a uniform integer in [lo, hi].
func randInt(r *rand.Rand, lo, hi int64) int64 {
	span := uint64(hi) - uint64(lo)
	if span == math.MaxUint64 {
		return int64(r.Uint64())
	}
	return lo + int64(r.Uint64N(span+1))
}

func intRange(c *call) (renderFunc, error) {
	lo, err := intOf(c.args[0])
	if err != nil {
		return nil, err
	}
	hi, err := intOf(c.args[1])
	if err != nil {
		return nil, err
	}
	return func(st *state, dst []byte) ([]byte, error) {
		a, b, err := bounds(st, lo, hi, c.args[0])
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, randInt(st.rng, a, b), 10), nil
	}, nil
}

// javaFloatFormat is a printf format with one floating-point verb, as "%.2f".
var javaFloatFormat = regexp.MustCompile(`^([^%]|%%)*%[-+ 0#]*[0-9]*(\.[0-9]+)?[eEfgG]([^%]|%%)*$`)

// floatRange is float(min, max[, format]) (bits 32) and double(min, max[, format]) (64): a
// uniform number in [min, max], printed with a decimal point so it always reads as a number
// with a fraction, or with the printf format.
func floatRange(bits int) func(*call) (renderFunc, error) {
	return func(c *call) (renderFunc, error) {
		lo, err := floatOf(c.args[0])
		if err != nil {
			return nil, err
		}
		hi, err := floatOf(c.args[1])
		if err != nil {
			return nil, err
		}
		format := ""
		if len(c.args) == 3 {
			if format, err = literal(c.args[2], "the format"); err != nil {
				return nil, err
			}
			if !javaFloatFormat.MatchString(format) {
				return nil, c.args[2].errorf("format %q must hold one number verb such as %%.2f", format)
			}
		}
		return func(st *state, dst []byte) ([]byte, error) {
			a, b, err := bounds(st, lo, hi, c.args[0])
			if err != nil {
				return dst, err
			}
			u := st.rng.Float64()
			// Explicit conversions keep the compiler from fusing multiply-adds, which would
			// make the stream differ between processors.
			v := min(float64(a*(1-u))+float64(b*u), b)
			if bits == 32 {
				v = float64(float32(v))
			}
			if format != "" {
				return fmt.Appendf(dst, format, v), nil
			}
			start := len(dst)
			dst = strconv.AppendFloat(dst, v, 'f', -1, bits)
			if !strings.ContainsAny(string(dst[start:]), ".eE") {
				dst = append(dst, '.', '0')
			}
			return dst, nil
		}, nil
	}
}

const hexDigits = "0123456789abcdef"

func appendRandomHex(dst []byte, r *rand.Rand, n int) []byte {
	var w uint64
	for i := range n {
		if i%8 == 0 {
			w = r.Uint64()
		}
		b := byte(w)
		w >>= 8
		dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
	}
	return dst
}

func randomHex(n int) renderFunc {
	return func(st *state, dst []byte) ([]byte, error) { return appendRandomHex(dst, st.rng, n), nil }
}

func hexFn(c *call) (renderFunc, error) {
	if len(c.args) == 0 {
		return randomHex(16), nil
	}
	n, err := countOf(c.args[0], maxLength)
	if err != nil {
		return nil, err
	}
	return func(st *state, dst []byte) ([]byte, error) {
		size, err := n(st)
		return appendRandomHex(dst, st.rng, int(size)), err
	}, nil
}

// uuidFn is uuid() and uuid("false") (without dashes): a random (version 4) UUID.
func uuidFn(c *call) (renderFunc, error) {
	dashes := true
	if len(c.args) == 1 {
		s, err := literal(c.args[0], "the argument")
		if err != nil {
			return nil, err
		}
		if dashes, err = strconv.ParseBool(s); err != nil {
			return nil, c.args[0].errorf(`the argument must be "true" or "false" (dashes or not), not %q`, s)
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		var b [16]byte
		hi, lo := st.rng.Uint64(), st.rng.Uint64()
		for i := range 8 {
			b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		for i, x := range b {
			if dashes && (i == 4 || i == 6 || i == 8 || i == 10) {
				dst = append(dst, '-')
			}
			dst = append(dst, hexDigits[x>>4], hexDigits[x&15])
		}
		return dst, nil
	}, nil
}

// boolFn is bool() and bool(p): true with probability p (default 0.5).
func boolFn(c *call) (renderFunc, error) {
	p := func(*state) (float64, error) { return 0.5, nil }
	if len(c.args) == 1 {
		f, err := floatOf(c.args[0])
		if err != nil {
			return nil, err
		}
		p = func(st *state) (float64, error) {
			v, err := f(st)
			if err == nil && (v < 0 || v > 1) {
				err = c.args[0].errorf("the probability %v must be between 0 and 1", v)
			}
			return v, err
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		prob, err := p(st)
		if err != nil {
			return dst, err
		}
		return strconv.AppendBool(dst, st.rng.Float64() < prob), nil
	}, nil
}

// indexFn is index(), index(start), index("name") and index("name", start): the message's
// offset plus start. Names are accepted for compatibility; every index counts messages.
func indexFn(c *call) (renderFunc, error) {
	var start int64
	var startArg *arg
	switch len(c.args) {
	case 1:
		if _, err := strconv.ParseInt(c.args[0].text, 10, 64); err == nil && !c.args[0].quoted && c.args[0].call == nil {
			startArg = c.args[0]
		}
	case 2:
		startArg = c.args[1]
	}
	if startArg != nil {
		s, err := literal(startArg, "the start")
		if err != nil {
			return nil, err
		}
		if start, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, startArg.errorf("the start %q is not a whole number", s)
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		return strconv.AppendInt(dst, st.index+start, 10), nil
	}, nil
}

// loremFn is lorem(count, "words") and lorem(count, "paragraphs").
func loremFn(c *call) (renderFunc, error) {
	count, err := countOf(c.args[0], maxLorem)
	if err != nil {
		return nil, err
	}
	unit, err := literal(c.args[1], "the unit")
	if err != nil {
		return nil, err
	}
	paragraphs := false
	switch unit {
	case "words", "word":
	case "paragraphs", "paragraph":
		paragraphs = true
	default:
		return nil, c.args[1].errorf(`the unit must be "words" or "paragraphs", not %q`, unit)
	}
	return func(st *state, dst []byte) ([]byte, error) {
		n, err := count(st)
		if err != nil {
			return dst, err
		}
		for i := range int(n) {
			if !paragraphs {
				if i > 0 {
					dst = append(dst, ' ')
				}
				dst = append(dst, loremWords[st.rng.IntN(len(loremWords))]...)
				continue
			}
			if i > 0 {
				dst = append(dst, "\n\n"...)
			}
			dst = appendParagraph(dst, st.rng)
		}
		return dst, nil
	}, nil
}

// appendParagraph appends 3 to 6 sentences of 5 to 12 lorem words.
func appendParagraph(dst []byte, r *rand.Rand) []byte {
	for s := range 3 + r.IntN(4) {
		if s > 0 {
			dst = append(dst, ' ')
		}
		for w := range 5 + r.IntN(8) {
			word := loremWords[r.IntN(len(loremWords))]
			if w == 0 {
				dst = append(dst, word[0]-'a'+'A')
				dst = append(dst, word[1:]...)
				continue
			}
			dst = append(dst, ' ')
			dst = append(dst, word...)
		}
		dst = append(dst, '.')
	}
	return dst
}

// digits renders pattern with every # replaced by a random digit.
func digits(pattern string) func(*call) (renderFunc, error) {
	return func(*call) (renderFunc, error) {
		return func(st *state, dst []byte) ([]byte, error) {
			for i := 0; i < len(pattern); i++ {
				if pattern[i] == '#' {
					dst = append(dst, byte('0'+st.rng.IntN(10)))
				} else {
					dst = append(dst, pattern[i])
				}
			}
			return dst, nil
		}, nil
	}
}

func pickFrom(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

// pick renders a random item of list.
func pick(list []string) func(*call) (renderFunc, error) {
	return func(*call) (renderFunc, error) {
		return func(st *state, dst []byte) ([]byte, error) { return append(dst, pickFrom(st.rng, list)...), nil }, nil
	}
}

func companyFn(*call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		dst = append(dst, pickFrom(st.rng, lastNames)...)
		if st.rng.IntN(3) == 0 {
			dst = append(dst, " and "...)
			return append(dst, pickFrom(st.rng, lastNames)...), nil
		}
		dst = append(dst, ' ')
		return append(dst, pickFrom(st.rng, companySuffixes)...), nil
	}, nil
}

func streetFn(*call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		dst = strconv.AppendInt(dst, int64(1+st.rng.IntN(9999)), 10)
		dst = append(dst, ' ')
		dst = append(dst, pickFrom(st.rng, lastNames)...)
		dst = append(dst, ' ')
		return append(dst, pickFrom(st.rng, streetSuffixes)...), nil
	}, nil
}

// usernameFn is the first initial of a random first name and a random last name, lower case.
func usernameFn(*call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		first, last := pickFrom(st.rng, firstNames), pickFrom(st.rng, lastNames)
		return appendLower(appendLower(dst, first[:1]), last), nil
	}, nil
}

// emailFn is email() and email(domain): first.last@domain, lower case.
func emailFn(c *call) (renderFunc, error) {
	domain := func(st *state) (string, error) { return pickFrom(st.rng, emailDomains), nil }
	if len(c.args) == 1 {
		domain = textOf(c.args[0])
	}
	return func(st *state, dst []byte) ([]byte, error) {
		first, last := pickFrom(st.rng, firstNames), pickFrom(st.rng, lastNames)
		d, err := domain(st)
		if err != nil {
			return dst, err
		}
		dst = append(appendLower(dst, first), '.')
		dst = append(appendLower(dst, last), '@')
		return append(dst, d...), nil
	}, nil
}

// appendLower appends s in lower case; the word lists are ASCII.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func ipv4Fn(*call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		v := st.rng.Uint32()
		for i := range 4 {
			if i > 0 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendUint(dst, uint64(byte(v>>(24-8*i))), 10)
		}
		return dst, nil
	}, nil
}

// ipv6Fn is ipv6(), ipv6("lower") and ipv6("upper"): eight groups of four hex digits.
func ipv6Fn(c *call) (renderFunc, error) {
	digits := hexDigits
	if len(c.args) == 1 {
		s, err := literal(c.args[0], "the case")
		if err != nil {
			return nil, err
		}
		switch s {
		case "lower":
		case "upper":
			digits = strings.ToUpper(hexDigits)
		default:
			return nil, c.args[0].errorf(`the case must be "lower" or "upper", not %q`, s)
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		words := [2]uint64{st.rng.Uint64(), st.rng.Uint64()}
		for g := range 8 {
			if g > 0 {
				dst = append(dst, ':')
			}
			v := uint16(words[g/4] >> (16 * (g % 4)))
			dst = append(dst, digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15])
		}
		return dst, nil
	}, nil
}

func concatFn(c *call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		var err error
		for _, a := range c.args {
			if dst, err = appendArg(st, dst, a); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}, nil
}

// randomFn renders one of its arguments, chosen uniformly; only the chosen one is evaluated.
func randomFn(c *call) (renderFunc, error) {
	return func(st *state, dst []byte) ([]byte, error) {
		return appendArg(st, dst, c.args[st.rng.IntN(len(c.args))])
	}, nil
}

// substringFn is substring(text, begin[, end]) in characters; out-of-range bounds are clamped.
func substringFn(c *call) (renderFunc, error) {
	text := textOf(c.args[0])
	begin, err := intOf(c.args[1])
	if err != nil {
		return nil, err
	}
	end := func(*state) (int64, error) { return math.MaxInt64, nil }
	if len(c.args) == 3 {
		if end, err = intOf(c.args[2]); err != nil {
			return nil, err
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		s, err := text(st)
		if err != nil {
			return dst, err
		}
		b, err := begin(st)
		if err != nil {
			return dst, err
		}
		e, err := end(st)
		if err != nil {
			return dst, err
		}
		n := int64(utf8.RuneCountInString(s))
		b, e = max(0, min(b, n)), max(0, min(e, n))
		for i, r := range []rune(s) {
			if int64(i) >= b && int64(i) < e {
				dst = utf8.AppendRune(dst, r)
			}
		}
		return dst, nil
	}, nil
}

// chars is alpha and alphaNumeric: (), (length) or (min, max) characters of set; the
// default length is 10 to 20.
func chars(set string) func(*call) (renderFunc, error) {
	return func(c *call) (renderFunc, error) {
		lo := func(*state) (int64, error) { return 10, nil }
		hi := func(*state) (int64, error) { return 20, nil }
		var err error
		switch len(c.args) {
		case 1:
			if lo, err = countOf(c.args[0], maxLength); err != nil {
				return nil, err
			}
			hi = lo
		case 2:
			if lo, err = countOf(c.args[0], maxLength); err != nil {
				return nil, err
			}
			if hi, err = countOf(c.args[1], maxLength); err != nil {
				return nil, err
			}
		}
		return func(st *state, dst []byte) ([]byte, error) {
			var a, b int64
			var err error
			if len(c.args) == 0 {
				a, b = 10, 20
			} else if a, b, err = bounds(st, lo, hi, c.args[0]); err != nil {
				return dst, err
			}
			for range randInt(st.rng, a, b) {
				dst = append(dst, set[st.rng.IntN(len(set))])
			}
			return dst, nil
		}, nil
	}
}

func mapText(f func(string) string) func(*call) (renderFunc, error) {
	return func(c *call) (renderFunc, error) {
		text := textOf(c.args[0])
		return func(st *state, dst []byte) ([]byte, error) {
			s, err := text(st)
			return append(dst, f(s)...), err
		}, nil
	}
}

// putFn is put(key, value): it remembers value under key for get() and renders it.
func putFn(c *call) (renderFunc, error) {
	key, value := textOf(c.args[0]), textOf(c.args[1])
	return func(st *state, dst []byte) ([]byte, error) {
		k, err := key(st)
		if err != nil {
			return dst, err
		}
		v, err := value(st)
		if err != nil {
			return dst, err
		}
		if st.vars == nil {
			st.vars = map[string]string{}
		}
		st.vars[k] = v
		return append(dst, v...), nil
	}, nil
}

// getFn is get(key): the value put under key earlier in the same message.
func getFn(c *call) (renderFunc, error) {
	key := textOf(c.args[0])
	return func(st *state, dst []byte) ([]byte, error) {
		k, err := key(st)
		if err != nil {
			return dst, err
		}
		v, ok := st.vars[k]
		if !ok {
			return dst, c.errorf("get(%q): nothing was put under this key before it in the message", k)
		}
		return append(dst, v...), nil
	}, nil
}

// trial renders a call whose arguments are all written out once, at compile time, so that
// problems such as a minimum above the maximum show up with the template's position.
func (c *call) trial() error {
	if functions[c.name].stateful {
		return nil
	}
	for _, a := range c.args {
		if a.call != nil {
			return nil
		}
	}
	st := &state{rng: rand.New(rand.NewPCG(1, 2)), time: time.Unix(0, 0).UTC()}
	_, err := c.render(st, nil)
	return err
}
