package python

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// format is Python's format(value, spec): the format-spec mini-language f-strings use
// ([[fill]align][sign][#][0][width][,][.precision][type]).
func format(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	spec := ""
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &v, &spec); err != nil {
		return nil, err
	}
	s, err := formatSpec(v, spec)
	if err != nil {
		return nil, err
	}
	return starlark.String(s), nil
}

// pyFormat is str.format with Python's format specs: _py_format(template, *args, **kwargs),
// fields {} {0} {name} with !r / !s and :spec.
func pyFormat(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("TypeError: format: missing the template")
	}
	tmpl, ok := args[0].(starlark.String)
	if !ok {
		return nil, fmt.Errorf("TypeError: format: the template is a %s, not a string", args[0].Type())
	}
	args = args[1:]
	named := make(map[string]starlark.Value, len(kw))
	for _, kv := range kw {
		named[string(kv[0].(starlark.String))] = kv[1]
	}
	var out strings.Builder
	t := string(tmpl)
	auto := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(t) && t[i+1] == c:
			out.WriteByte(c)
			i++
		case c == '}':
			return nil, fmt.Errorf("ValueError: Single '}' encountered in format string")
		case c == '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("ValueError: Single '{' encountered in format string")
			}
			field := t[i+1 : i+end]
			i += end
			name, spec, _ := strings.Cut(field, ":")
			name, conv, _ := strings.Cut(name, "!")
			var v starlark.Value
			switch n, err := strconv.Atoi(name); {
			case name == "":
				if auto >= len(args) {
					return nil, fmt.Errorf("IndexError: Replacement index %d out of range for positional args tuple", auto)
				}
				v, auto = args[auto], auto+1
			case err == nil:
				if n >= len(args) {
					return nil, fmt.Errorf("IndexError: Replacement index %d out of range for positional args tuple", n)
				}
				v = args[n]
			default:
				if v = named[name]; v == nil {
					return nil, fmt.Errorf("KeyError: %q", name)
				}
			}
			if conv == "r" {
				v = starlark.String(pyRepr(v))
			} else if _, isStr := v.(starlark.String); conv == "s" && !isStr {
				v = starlark.String(pyRepr(v))
			}
			s, err := formatSpec(v, spec)
			if err != nil {
				return nil, err
			}
			out.WriteString(s)
		default:
			out.WriteByte(c)
		}
	}
	return starlark.String(out.String()), nil
}

var specRE = regexp.MustCompile(`^(?:(.)?([<>^=]))?([+\- ])?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$`)

func formatSpec(v starlark.Value, spec string) (string, error) {
	m := specRE.FindStringSubmatch(spec)
	if m == nil {
		return "", fmt.Errorf("ValueError: Invalid format specifier %q", spec)
	}
	fill, align, sign, zero, width, group, prec, typ := m[1], m[2], m[3], m[5], m[6], m[7], m[8], m[9]
	var body string
	numeric := false
	switch x := v.(type) {
	case starlark.Int, starlark.Float:
		numeric = true
		var err error
		if body, err = formatNumber(x, typ, prec, sign, group); err != nil {
			return "", err
		}
	default:
		if typ != "" && typ != "s" {
			return "", fmt.Errorf("ValueError: Unknown format code '%s' for object of type '%s'", typ, v.Type())
		}
		if s, ok := v.(starlark.String); ok {
			body = string(s)
		} else {
			body = pyRepr(v)
		}
		if prec != "" {
			n, _ := strconv.Atoi(prec)
			if r := []rune(body); len(r) > n {
				body = string(r[:n])
			}
		}
	}
	w, _ := strconv.Atoi(width)
	if zero != "" && fill == "" && align == "" {
		fill, align = "0", "="
	}
	if fill == "" {
		fill = " "
	}
	if align == "" {
		align = "<"
		if numeric {
			align = ">"
		}
	}
	return pad(body, fill, align, w), nil
}

func formatNumber(x starlark.Value, typ, prec, sign, group string) (string, error) {
	f, _ := starlark.AsFloat(x)
	i, isInt := x.(starlark.Int)
	p := 6
	if prec != "" {
		p, _ = strconv.Atoi(prec)
	}
	var s string
	switch typ {
	case "d", "n":
		if !isInt {
			return "", fmt.Errorf("ValueError: Unknown format code 'd' for object of type 'float'")
		}
		s = i.String()
	case "", "s":
		if isInt {
			s = i.String()
		} else if prec != "" {
			s = strconv.FormatFloat(f, 'g', p, 64)
		} else {
			s = starlark.Float(f).String()
		}
	case "f", "F":
		s = strconv.FormatFloat(f, 'f', p, 64)
	case "e", "E":
		s = strconv.FormatFloat(f, 'e', p, 64)
	case "g", "G":
		s = strconv.FormatFloat(f, 'g', max(p, 1), 64)
	case "%":
		s = strconv.FormatFloat(f*100, 'f', p, 64) + "%"
	case "x", "X", "o", "b":
		n, ok := i.Int64()
		if !isInt || !ok {
			return "", fmt.Errorf("ValueError: Unknown format code '%s' for object of type '%s'", typ, x.Type())
		}
		s = strconv.FormatInt(n, map[string]int{"x": 16, "X": 16, "o": 8, "b": 2}[typ])
	case "c":
		n, _ := i.Int64()
		s = string(rune(n))
	}
	if typ == "X" || typ == "E" || typ == "G" || typ == "F" {
		s = strings.ToUpper(s)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s = strings.ToLower(strconv.FormatFloat(f, 'f', -1, 64))
		s = strings.TrimPrefix(strings.Replace(s, "+inf", "inf", 1), "+")
	}
	if group != "" {
		s = groupDigits(s, group)
	}
	if !strings.HasPrefix(s, "-") && (sign == "+" || sign == " ") {
		s = sign + s
	}
	return s, nil
}

// groupDigits puts sep between thousands of the integer part of s.
func groupDigits(s, sep string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, rest := s, ""
	if i := strings.IndexAny(s, ".e%"); i >= 0 {
		intPart, rest = s[:i], s[i:]
	}
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	out := b.String() + rest
	if neg {
		out = "-" + out
	}
	return out
}

func pad(s, fill, align string, width int) string {
	n := width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	switch align {
	case ">":
		return strings.Repeat(fill, n) + s
	case "^":
		return strings.Repeat(fill, n/2) + s + strings.Repeat(fill, n-n/2)
	case "=":
		if s != "" && strings.ContainsAny(s[:1], "+- ") {
			return s[:1] + strings.Repeat(fill, n) + s[1:]
		}
		return strings.Repeat(fill, n) + s
	}
	return s + strings.Repeat(fill, n)
}

// dumps is Python's json.dumps: ", " and ": " separators, ASCII output, keys in insertion
// order (sort_keys sorts them), optional indent.
func dumps(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	var indent starlark.Value = starlark.None
	sortKeys := false
	if err := starlark.UnpackArgs(b.Name(), args, kw, "obj", &v, "indent?", &indent, "sort_keys?", &sortKeys); err != nil {
		return nil, err
	}
	e := &jsonEncoder{sortKeys: sortKeys, indent: -1}
	if n, err := starlark.AsInt32(indent); err == nil {
		e.indent = n
	}
	if err := e.encode(v, 0); err != nil {
		return nil, err
	}
	return starlark.String(e.b.String()), nil
}

type jsonEncoder struct {
	b        strings.Builder
	sortKeys bool
	indent   int
}

func (e *jsonEncoder) newline(depth int) {
	if e.indent >= 0 {
		e.b.WriteString("\n" + strings.Repeat(" ", e.indent*depth))
	}
}

func (e *jsonEncoder) sep() {
	if e.indent >= 0 {
		e.b.WriteString(",")
	} else {
		e.b.WriteString(", ")
	}
}

func (e *jsonEncoder) encode(v starlark.Value, depth int) error {
	switch x := v.(type) {
	case starlark.NoneType:
		e.b.WriteString("null")
	case starlark.Bool:
		e.b.WriteString(map[bool]string{true: "true", false: "false"}[bool(x)])
	case starlark.Int:
		e.b.WriteString(x.String())
	case starlark.Float:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			e.b.WriteString("NaN")
		case math.IsInf(f, 0):
			e.b.WriteString(map[bool]string{true: "Infinity", false: "-Infinity"}[f > 0])
		default:
			e.b.WriteString(x.String())
		}
	case starlark.String:
		e.b.WriteString(jsonString(string(x)))
	case timestamp:
		return fmt.Errorf("TypeError: Object of type Timestamp is not JSON serializable")
	case *starlark.Dict:
		return e.object(x.Items(), depth)
	case *row:
		return e.object(x.dict().Items(), depth)
	case starlark.Iterable:
		e.b.WriteString("[")
		it := x.Iterate()
		defer it.Done()
		var elem starlark.Value
		for i := 0; it.Next(&elem); i++ {
			if i > 0 {
				e.sep()
			}
			e.newline(depth + 1)
			if err := e.encode(elem, depth+1); err != nil {
				return err
			}
		}
		if x, ok := x.(starlark.Sequence); ok && x.Len() > 0 {
			e.newline(depth)
		}
		e.b.WriteString("]")
	default:
		return fmt.Errorf("TypeError: Object of type %s is not JSON serializable", v.Type())
	}
	return nil
}

func (e *jsonEncoder) object(items []starlark.Tuple, depth int) error {
	if e.sortKeys {
		sort.SliceStable(items, func(i, j int) bool { return items[i][0].String() < items[j][0].String() })
	}
	e.b.WriteString("{")
	for i, kv := range items {
		if i > 0 {
			e.sep()
		}
		e.newline(depth + 1)
		key, ok := kv[0].(starlark.String)
		if !ok {
			key = starlark.String(kv[0].String())
		}
		e.b.WriteString(jsonString(string(key)) + ": ")
		if err := e.encode(kv[1], depth+1); err != nil {
			return err
		}
	}
	if len(items) > 0 {
		e.newline(depth)
	}
	e.b.WriteString("}")
	return nil
}

// jsonString quotes s as Python's json does with ensure_ascii.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyRepr is Python's repr: strings in single quotes (double when they hold a single quote
// and no double one), containers with their elements' reprs.
func pyRepr(v starlark.Value) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v starlark.Value) {
	switch x := v.(type) {
	case starlark.String:
		s := string(x)
		q := byte('\'')
		if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
			q = '"'
		}
		b.WriteByte(q)
		for _, r := range s {
			switch {
			case r == rune(q) || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\r':
				b.WriteString(`\r`)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(b, `\x%02x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte(q)
	case *starlark.List:
		writeElems(b, "[", "]", x.Len(), x.Index)
	case starlark.Tuple:
		end := ")"
		if x.Len() == 1 {
			end = ",)"
		}
		writeElems(b, "(", end, x.Len(), x.Index)
	case *starlark.Dict:
		b.WriteByte('{')
		for i, kv := range x.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, kv[0])
			b.WriteString(": ")
			writeRepr(b, kv[1])
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.String())
	}
}

func writeElems(b *strings.Builder, open, close string, n int, at func(int) starlark.Value) {
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, at(i))
	}
	b.WriteString(close)
}

// pyStr is Python's str: a string itself, anything else its repr.
func pyStr(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value = starlark.String("")
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 0, &v); err != nil {
		return nil, err
	}
	if s, ok := v.(starlark.String); ok {
		return s, nil
	}
	return starlark.String(pyRepr(v)), nil
}

func pyReprBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &v); err != nil {
		return nil, err
	}
	return starlark.String(pyRepr(v)), nil
}
