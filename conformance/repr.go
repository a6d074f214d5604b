package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ParseRepr reads the Python repr Beam prints for a row: Row(name='x', n=1, tags=['a'],
// inner=Row(...)), with strings, numbers, True, False, None, lists, tuples and dicts.
// Rows and dicts read as map[string]any, numbers as int64 or float64.
func ParseRepr(s string) (any, error) {
	p := &reprParser{src: []rune(s)}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.src) {
		return nil, p.errorf("unexpected %q after the value", string(p.src[p.i:]))
	}
	return v, nil
}

type reprParser struct {
	src []rune
	i   int
}

func (p *reprParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at column %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

func (p *reprParser) space() {
	for p.i < len(p.src) && unicode.IsSpace(p.src[p.i]) {
		p.i++
	}
}

func (p *reprParser) peek() rune {
	p.space()
	if p.i >= len(p.src) {
		return 0
	}
	return p.src[p.i]
}

func (p *reprParser) expect(r rune) error {
	if p.peek() != r {
		return p.errorf("want %q", r)
	}
	p.i++
	return nil
}

func (p *reprParser) value() (any, error) {
	switch r := p.peek(); {
	case r == '\'' || r == '"':
		return p.str()
	case r == '[' || r == '(':
		p.i++
		return p.list(map[rune]rune{'[': ']', '(': ')'}[r])
	case r == '{':
		p.i++
		return p.dict()
	case r == '-' || r == '+' || unicode.IsDigit(r):
		return p.number()
	case unicode.IsLetter(r) || r == '_':
		return p.name()
	}
	return nil, p.errorf("want a value")
}

func (p *reprParser) ident() string {
	start := p.i
	for p.i < len(p.src) && (unicode.IsLetter(p.src[p.i]) || unicode.IsDigit(p.src[p.i]) || p.src[p.i] == '_' || p.src[p.i] == '.') {
		p.i++
	}
	return string(p.src[start:p.i])
}

func (p *reprParser) name() (any, error) {
	switch name := p.ident(); name {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	case "Row", "beam.Row":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		return p.row()
	default:
		return nil, p.errorf("unknown name %q", name)
	}
}

// row reads name=value pairs up to ')'.
func (p *reprParser) row() (any, error) {
	out := map[string]any{}
	for p.peek() != ')' {
		p.space()
		key := p.ident()
		if key == "" {
			return nil, p.errorf("want a field name")
		}
		if err := p.expect('='); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out[key] = v
		if p.peek() == ',' {
			p.i++
		}
	}
	p.i++
	return out, nil
}

func (p *reprParser) list(end rune) (any, error) {
	out := []any{}
	for p.peek() != end {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.peek() == ',' {
			p.i++
		} else if p.peek() != end {
			return nil, p.errorf("want ',' or %q", end)
		}
	}
	p.i++
	return out, nil
}

func (p *reprParser) dict() (any, error) {
	out := map[string]any{}
	for p.peek() != '}' {
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out[fmt.Sprint(k)] = v
		if p.peek() == ',' {
			p.i++
		}
	}
	p.i++
	return out, nil
}

func (p *reprParser) number() (any, error) {
	start := p.i
	for p.i < len(p.src) && strings.ContainsRune("+-0123456789.eE_", p.src[p.i]) {
		p.i++
	}
	text := strings.ReplaceAll(string(p.src[start:p.i]), "_", "")
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, p.errorf("bad number %q", text)
	}
	return f, nil
}

// str reads a Python string literal with its escapes.
func (p *reprParser) str() (any, error) {
	quote := p.src[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.src) && p.src[p.i] != quote {
		r := p.src[p.i]
		p.i++
		if r != '\\' || p.i >= len(p.src) {
			b.WriteRune(r)
			continue
		}
		e := p.src[p.i]
		p.i++
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x', 'u', 'U':
			n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.i+n > len(p.src) {
				return nil, p.errorf("short \\%c escape", e)
			}
			c, err := strconv.ParseUint(string(p.src[p.i:p.i+n]), 16, 32)
			if err != nil {
				return nil, p.errorf("bad \\%c escape", e)
			}
			b.WriteRune(rune(c))
			p.i += n
		default:
			b.WriteRune(e)
		}
	}
	if p.i >= len(p.src) {
		return nil, p.errorf("string not terminated")
	}
	p.i++
	return b.String(), nil
}
