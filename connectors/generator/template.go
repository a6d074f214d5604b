package generator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/diag"
)

// maxNesting bounds how deeply function calls nest in a placeholder.
const maxNesting = 32

// Template is a compiled faker template: text, usually JSON, with {{function(args)}}
// placeholders. A Template is immutable and safe for concurrent use; render it with a
// Renderer.
type Template struct {
	segs []segment
}

// segment is literal text or a placeholder.
type segment struct {
	lit  string
	call *call // nil for literal text
	// quoted is set for a placeholder inside a JSON string: its output is escaped for JSON.
	quoted bool
}

// call is a function call in a placeholder, compiled.
type call struct {
	name      string
	args      []*arg
	line, col int
	render    renderFunc
}

// arg is an argument of a call: a literal (a quoted string, a number or a bare word) or a
// nested call.
type arg struct {
	text      string
	call      *call
	quoted    bool   // a quoted string literal
	fn        string // the function it is an argument of, for messages
	line, col int
}

// renderFunc appends the output of a call to dst.
type renderFunc func(st *state, dst []byte) ([]byte, error)

// TemplateError is a problem in a template, at a 1-based line and column (in characters)
// of the template text.
type TemplateError struct {
	Line, Col int
	Msg       string
}

func (e *TemplateError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// TemplateErrors are all the problems Parse found, in the order of the text.
type TemplateErrors []*TemplateError

func (es TemplateErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Parse compiles template text. A placeholder holds one function call, whose arguments are
// quoted strings ("..." or '...', with backslash escapes), numbers, bare words or nested
// calls: {{concat("id-", integer(1, 9))}}. The error is TemplateErrors, with every problem.
func Parse(text string) (*Template, error) {
	p := &parser{src: text, mark: position{line: 1, col: 1}}
	var segs []segment
	inString := false // inside a JSON string of the literal text
	litStart := 0
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '{' && i+1 < len(text) && text[i+1] == '{':
			if i > litStart {
				segs = append(segs, segment{lit: text[litStart:i]})
			}
			end, placeholder := p.placeholder(i)
			if placeholder != nil {
				segs = append(segs, segment{call: placeholder, quoted: inString})
			}
			i, litStart = end, end
		case c == '\\' && inString:
			i += 2
		case c == '"':
			inString = !inString
			i++
		default:
			i++
		}
	}
	if litStart < len(text) {
		segs = append(segs, segment{lit: text[litStart:]})
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return &Template{segs: segs}, nil
}

// position is a byte offset with its line and column.
type position struct{ off, line, col int }

type parser struct {
	src    string
	mark   position // the last position asked for
	errs   TemplateErrors
	puts   map[string]bool // the keys put so far
	anyPut bool            // a put with a computed key: any key may be set
}

// at returns the line and column of byte offset off. Parsing asks for offsets that mostly
// grow, so it continues from the last answer rather than counting from the start.
func (p *parser) at(off int) (line, col int) {
	off = min(off, len(p.src))
	if off < p.mark.off {
		p.mark = position{line: 1, col: 1}
	}
	for p.mark.off < off {
		r, size := utf8.DecodeRuneInString(p.src[p.mark.off:])
		if r == '\n' {
			p.mark.line, p.mark.col = p.mark.line+1, 1
		} else {
			p.mark.col++
		}
		p.mark.off += size
	}
	return p.mark.line, p.mark.col
}

func (p *parser) errorf(off int, format string, args ...any) {
	line, col := p.at(off)
	p.errs = append(p.errs, &TemplateError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

// placeholder parses the placeholder that starts at start ("{{") and returns the offset after
// it and its call, or nil after reporting a problem.
func (p *parser) placeholder(start int) (int, *call) {
	i := skipSpace(p.src, start+2)
	a, i, ok := p.expr(i, 0)
	if ok {
		i = skipSpace(p.src, i)
		if !strings.HasPrefix(p.src[i:], "}}") {
			p.errorf(i, "expected }} to close the placeholder opened at %s, found %s", p.pos(start), p.found(i))
			ok = false
		} else if a.call == nil {
			p.errorf(start, "a placeholder holds a function call, such as {{uuid()}}, not the literal %q", a.text)
			ok = false
		}
	}
	if !ok {
		// Skip to the end of this placeholder so the rest of the text is still checked.
		if end := strings.Index(p.src[i:], "}}"); end >= 0 {
			return i + end + 2, nil
		}
		return len(p.src), nil
	}
	return i + 2, a.call
}

func (p *parser) pos(off int) string {
	line, col := p.at(off)
	return fmt.Sprintf("%d:%d", line, col)
}

// found describes the text at off for messages.
func (p *parser) found(off int) string {
	if off >= len(p.src) {
		return "the end of the template"
	}
	r, _ := utf8.DecodeRuneInString(p.src[off:])
	return fmt.Sprintf("%q", r)
}

// expr parses an argument or a call at i and returns it with the offset after it.
func (p *parser) expr(i, depth int) (*arg, int, bool) {
	line, col := p.at(i)
	a := &arg{line: line, col: col}
	if i >= len(p.src) {
		p.errorf(i, "expected a function call, found the end of the template")
		return nil, i, false
	}
	switch c := p.src[i]; {
	case c == '"' || c == '\'':
		text, end, ok := p.quoted(i)
		a.text, a.quoted = text, true
		return a, end, ok
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		end := i + 1
		for end < len(p.src) && strings.IndexByte("0123456789.eE+-", p.src[end]) >= 0 {
			end++
		}
		a.text = p.src[i:end]
		return a, end, true
	case isIdentStart(c):
		end := i + 1
		for end < len(p.src) && (isIdentStart(p.src[end]) || isDigit(p.src[end])) {
			end++
		}
		a.text = p.src[i:end]
		next := skipSpace(p.src, end)
		if next >= len(p.src) || p.src[next] != '(' {
			return a, end, true // a bare word, taken as text
		}
		if depth >= maxNesting {
			p.errorf(i, "function calls nest deeper than %d levels", maxNesting)
			return nil, end, false
		}
		nested, end, ok := p.call(a.text, i, next, depth)
		a.call = nested
		return a, end, ok
	}
	p.errorf(i, "expected a function call, a quoted string or a number, found %s", p.found(i))
	return nil, i, false
}

// call parses the arguments of function name, whose name starts at start and whose "(" is at
// open, and compiles the call.
func (p *parser) call(name string, start, open, depth int) (*call, int, bool) {
	line, col := p.at(start)
	c := &call{name: name, line: line, col: col}
	i := skipSpace(p.src, open+1)
	if i < len(p.src) && p.src[i] == ')' {
		i++
	} else {
		for {
			a, end, ok := p.expr(i, depth+1)
			if !ok {
				return nil, end, false
			}
			a.fn = name
			c.args = append(c.args, a)
			i = skipSpace(p.src, end)
			if i < len(p.src) && p.src[i] == ',' {
				i = skipSpace(p.src, i+1)
				continue
			}
			if i < len(p.src) && p.src[i] == ')' {
				i++
				break
			}
			p.errorf(i, "expected , or ) in the arguments of %s(), found %s", name, p.found(i))
			return nil, i, false
		}
	}
	if err := c.compile(); err != nil {
		p.errs = append(p.errs, err)
		return nil, i, false
	}
	if err := p.checkVars(c); err != nil {
		p.errs = append(p.errs, err)
		return nil, i, false
	}
	return c, i, true
}

// checkVars checks that get(key) follows a put(key, ...), when the keys are written out.
func (p *parser) checkVars(c *call) *TemplateError {
	if len(c.args) == 0 {
		return nil
	}
	key := c.args[0]
	switch {
	case c.name == "put" && key.call != nil:
		p.anyPut = true
	case c.name == "put":
		if p.puts == nil {
			p.puts = map[string]bool{}
		}
		p.puts[key.text] = true
	case c.name == "get" && key.call == nil && !p.anyPut && !p.puts[key.text]:
		return c.errorf("get(%q) has no put(%q, ...) before it", key.text, key.text)
	}
	return nil
}

// quoted parses the quoted string at i, with backslash escapes, and returns its text and the
// offset after the closing quote.
func (p *parser) quoted(i int) (string, int, bool) {
	q := p.src[i]
	var b strings.Builder
	for j := i + 1; j < len(p.src); j++ {
		c := p.src[j]
		switch {
		case c == q:
			return b.String(), j + 1, true
		case c == '\\' && j+1 < len(p.src):
			j++
			switch e := p.src[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default: // \" \' \\ \{ \} and any other character stand for themselves
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	p.errorf(i, "unterminated string: no closing %c", q)
	return "", len(p.src), false
}

// compile looks the function up, checks the number of arguments and compiles the call.
func (c *call) compile() *TemplateError {
	f, ok := functions[c.name]
	if !ok {
		if why, known := unsupported[c.name]; known {
			return c.errorf("%s() is not supported: %s", c.name, why)
		}
		return c.errorf("unknown function %q%s", c.name, diag.DidYouMean(c.name, functionNames()))
	}
	n := len(c.args)
	if n < f.min || (f.max >= 0 && n > f.max) {
		return c.errorf("%s() takes %s, not %d", c.name, f.arity(), n)
	}
	render, err := f.compile(c)
	if err == nil {
		c.render = render
		err = c.trial()
	}
	if err != nil {
		if te, ok := err.(*TemplateError); ok {
			return te
		}
		return c.errorf("%s(): %v", c.name, err)
	}
	return nil
}

func (c *call) errorf(format string, args ...any) *TemplateError {
	return &TemplateError{Line: c.line, Col: c.col, Msg: fmt.Sprintf(format, args...)}
}

// errorf returns a problem at the argument.
func (a *arg) errorf(format string, args ...any) *TemplateError {
	return &TemplateError{Line: a.line, Col: a.col, Msg: a.fn + "(): " + fmt.Sprintf(format, args...)}
}

// eval returns the argument's value as text, rendering a nested call.
func (a *arg) eval(st *state) (string, error) {
	if a.call == nil {
		return a.text, nil
	}
	// Nested calls render into a buffer of their own depth, so an enclosing one is not overwritten.
	d := st.depth
	if d == len(st.scratch) {
		st.scratch = append(st.scratch, nil)
	}
	st.depth++
	buf, err := a.call.render(st, st.scratch[d][:0])
	st.depth--
	st.scratch[d] = buf[:0]
	if err != nil {
		return "", err
	}
	return string(buf), nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }

// state is what a call sees while one message renders: its randomness, index and time.
type state struct {
	rng     *rand.Rand
	index   int64
	time    time.Time
	vars    map[string]string // put() and get()
	scratch [][]byte          // buffers of nested calls, by depth
	depth   int
}

// Renderer renders messages of one template with one seed. Message index i of a seed is
// always the same text: its randomness comes from a PCG seeded with (seed, i) alone. A
// Renderer is not safe for concurrent use; make one per goroutine.
type Renderer struct {
	t      *Template
	pcg    *rand.PCG
	k0, k1 uint64
	st     state
}

// NewRenderer returns a renderer of t for the stream of seed.
func (t *Template) NewRenderer(seed uint64) *Renderer {
	r := &Renderer{t: t, pcg: rand.NewPCG(0, 0), k0: mix(seed), k1: mix(seed ^ 0x9e3779b97f4a7c15)}
	r.st.rng = rand.New(r.pcg)
	return r
}

// Render appends message index, generated at time at, to dst. timestamp() and date() without
// arguments render at. The error is a *TemplateError at the call that failed.
func (r *Renderer) Render(dst []byte, index int64, at time.Time) ([]byte, error) {
	r.pcg.Seed(r.k0, mix(uint64(index)^r.k1))
	r.st.index, r.st.time, r.st.depth = index, at, 0
	clear(r.st.vars)
	var err error
	for i := range r.t.segs {
		s := &r.t.segs[i]
		switch {
		case s.call == nil:
			dst = append(dst, s.lit...)
		case s.quoted:
			start := len(dst)
			if dst, err = s.call.render(&r.st, dst); err != nil {
				return dst, err
			}
			dst = escapeJSON(dst, start)
		default:
			if dst, err = s.call.render(&r.st, dst); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// mix is SplitMix64's finalizer: it spreads a seed's bits so that neighbouring indexes give
// unrelated PCG states.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// escapeJSON escapes dst[start:] for the inside of a JSON string.
func escapeJSON(dst []byte, start int) []byte {
	clean := true
	for _, c := range dst[start:] {
		if c < 0x20 || c == '"' || c == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return dst
	}
	raw := string(dst[start:])
	dst = dst[:start]
	const hex = "0123456789abcdef"
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
