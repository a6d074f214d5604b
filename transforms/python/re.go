package python

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Python's re on Go's regexp (RE2). The syntax is Python's for everything RE2 has; what RE2
// lacks (lookaround, backreferences, atomic groups, conditionals) is refused, at build time
// when the pattern is a literal, rather than matching something else.

// Flags of Python's re that have an RE2 spelling.
const (
	flagIgnoreCase = 2
	flagMultiline  = 8
	flagDotAll     = 16
)

// unsupportedRE lists the Python pattern features RE2 has not, with what to say.
var unsupportedRE = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\(\?<?[=!]`), "lookahead and lookbehind assertions ((?=...), (?!...), (?<=...), (?<!...))"},
	{regexp.MustCompile(`\(\?P=`), "named backreferences ((?P=name))"},
	{regexp.MustCompile(`\\[1-9]`), "backreferences (\\1 ... \\9)"},
	{regexp.MustCompile(`\(\?>`), "atomic groups ((?>...))"},
	{regexp.MustCompile(`\(\?\(`), "conditional groups ((?(id)yes|no))"},
	{regexp.MustCompile(`[*+?}]\+`), "possessive quantifiers (*+, ++, ?+)"},
}

// patterns caches compiled patterns by flags and text (and anchored ones by RE2 text), so
// that re.match(r"...", s) compiles once, not once per row. Its size is bounded by
// maxCached; patterns built from data past that are compiled each time.
var (
	patterns  sync.Map
	cachedN   atomic.Int64
	maxCached = int64(4096)
)

type compiled struct {
	re  *regexp.Regexp
	err error
}

func cached(key string, compile func() (*regexp.Regexp, error)) (*regexp.Regexp, error) {
	if c, ok := patterns.Load(key); ok {
		return c.(compiled).re, c.(compiled).err
	}
	re, err := compile()
	if cachedN.Add(1) <= maxCached {
		patterns.Store(key, compiled{re, err})
	}
	return re, err
}

// translatePattern turns a Python pattern into an RE2 one, or says what RE2 lacks.
func translatePattern(p string, flags int) (*regexp.Regexp, error) {
	return cached(strconv.Itoa(flags)+"\x00"+p, func() (*regexp.Regexp, error) { return translate(p, flags) })
}

func translate(p string, flags int) (*regexp.Regexp, error) {
	unescaped := stripEscapedBackslashes(p)
	for _, u := range unsupportedRE {
		if u.re.MatchString(unescaped) {
			return nil, fmt.Errorf("the pattern %q uses %s, which Go's regexp (RE2) does not have", p, u.what)
		}
	}
	p = strings.ReplaceAll(p, `\Z`, `\z`)
	prefix := ""
	if flags&flagIgnoreCase != 0 {
		prefix += "i"
	}
	if flags&flagMultiline != 0 {
		prefix += "m"
	}
	if flags&flagDotAll != 0 {
		prefix += "s"
	}
	if prefix != "" {
		p = "(?" + prefix + ")" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("re.error: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// stripEscapedBackslashes removes \\ pairs, so that \\1 (a backslash and a 1) is not read as
// a backreference.
func stripEscapedBackslashes(p string) string { return strings.ReplaceAll(p, `\\`, "") }

// reModule is Python's re.
func reModule() starlark.Value {
	fn := func(name string, impl func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
		return starlark.NewBuiltin("re."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("TypeError: %s() missing the pattern", b.Name())
			}
			re, err := patternArg(args[0], flagsArg(kw))
			if err != nil {
				return nil, err
			}
			return impl(re, args[1:], withoutFlags(kw))
		})
	}
	members := starlark.StringDict{
		"IGNORECASE": starlark.MakeInt(flagIgnoreCase), "I": starlark.MakeInt(flagIgnoreCase),
		"MULTILINE": starlark.MakeInt(flagMultiline), "M": starlark.MakeInt(flagMultiline),
		"DOTALL": starlark.MakeInt(flagDotAll), "S": starlark.MakeInt(flagDotAll),
		"escape": starlark.NewBuiltin("re.escape", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var s string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &s); err != nil {
				return nil, err
			}
			return starlark.String(regexp.QuoteMeta(s)), nil
		}),
		"compile": fn("compile", func(re *regexp.Regexp, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			return &pattern{re: re}, nil
		}),
	}
	for name, m := range patternMethods {
		members[name] = fn(name, m)
	}
	return &starlarkstruct.Module{Name: "re", Members: members}
}

func patternArg(v starlark.Value, flags int) (*regexp.Regexp, error) {
	switch x := v.(type) {
	case *pattern:
		return x.re, nil
	case starlark.String:
		re, err := translatePattern(string(x), flags)
		if err != nil && !strings.HasPrefix(err.Error(), "re.error") {
			err = fmt.Errorf("re.error: %w", err)
		}
		return re, err
	}
	return nil, fmt.Errorf("TypeError: first argument must be string or compiled pattern, not %s", v.Type())
}

func flagsArg(kw []starlark.Tuple) int {
	for _, kv := range kw {
		if string(kv[0].(starlark.String)) == "flags" {
			if i, err := starlark.AsInt32(kv[1]); err == nil {
				return i
			}
		}
	}
	return 0
}

func withoutFlags(kw []starlark.Tuple) []starlark.Tuple {
	var out []starlark.Tuple
	for _, kv := range kw {
		if string(kv[0].(starlark.String)) != "flags" {
			out = append(out, kv)
		}
	}
	return out
}

// patternMethods are the functions of re that a compiled pattern also has as methods.
var patternMethods = map[string]func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error){
	"match":     matcher("match", func(re *regexp.Regexp, s string) []int { return anchoredMatch(re, s, false) }),
	"fullmatch": matcher("fullmatch", func(re *regexp.Regexp, s string) []int { return anchoredMatch(re, s, true) }),
	"search":    matcher("search", func(re *regexp.Regexp, s string) []int { return re.FindStringSubmatchIndex(s) }),
	"findall": func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var s string
		if err := starlark.UnpackPositionalArgs("findall", args, kw, 1, &s); err != nil {
			return nil, err
		}
		var out []starlark.Value
		for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
			m := &match{re: re, s: s, loc: loc}
			switch n := re.NumSubexp(); n {
			case 0:
				out = append(out, m.group(0))
			case 1:
				out = append(out, m.groupOr(1, starlark.String("")))
			default:
				groups := make(starlark.Tuple, n)
				for i := range groups {
					groups[i] = m.groupOr(i+1, starlark.String(""))
				}
				out = append(out, groups)
			}
		}
		return starlark.NewList(out), nil
	},
	"sub": func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var repl starlark.Value
		var s string
		count := 0
		if err := starlark.UnpackArgs("sub", args, kw, "repl", &repl, "string", &s, "count?", &count); err != nil {
			return nil, err
		}
		return substitute(re, repl, s, count)
	},
	"split": func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var s string
		maxsplit := 0
		if err := starlark.UnpackArgs("split", args, kw, "string", &s, "maxsplit?", &maxsplit); err != nil {
			return nil, err
		}
		n := -1
		if maxsplit > 0 {
			n = maxsplit
		}
		var out []starlark.Value
		last := 0
		for _, loc := range re.FindAllStringSubmatchIndex(s, n) {
			out = append(out, starlark.String(s[last:loc[0]]))
			m := &match{re: re, s: s, loc: loc}
			for g := 1; g <= re.NumSubexp(); g++ {
				out = append(out, m.group(g))
			}
			last = loc[1]
		}
		return starlark.NewList(append(out, starlark.String(s[last:]))), nil
	},
}

func matcher(name string, find func(re *regexp.Regexp, s string) []int) func(*regexp.Regexp, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(re *regexp.Regexp, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var s string
		if err := starlark.UnpackPositionalArgs(name, args, kw, 1, &s); err != nil {
			return nil, err
		}
		if loc := find(re, s); loc != nil {
			return &match{re: re, s: s, loc: loc}, nil
		}
		return starlark.None, nil
	}
}

// anchoredMatch finds a match at the start of s (and to its end, when full), as Python's
// match and fullmatch do.
func anchoredMatch(re *regexp.Regexp, s string, full bool) []int {
	expr := `^(?:` + re.String() + `)`
	if full {
		expr += `$`
	}
	anchored, err := cached("anchored\x00"+expr, func() (*regexp.Regexp, error) { return regexp.Compile(expr) })
	if err != nil {
		return nil
	}
	return anchored.FindStringSubmatchIndex(s)
}

// substitute is re.sub: repl is a string with \1 and \g<name> references, or a function of
// the match.
func substitute(re *regexp.Regexp, repl starlark.Value, s string, count int) (starlark.Value, error) {
	n := -1
	if count > 0 {
		n = count
	}
	var b strings.Builder
	last := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, n) {
		b.WriteString(s[last:loc[0]])
		m := &match{re: re, s: s, loc: loc}
		switch r := repl.(type) {
		case starlark.String:
			out, err := expandTemplate(m, string(r))
			if err != nil {
				return nil, err
			}
			b.WriteString(out)
		case starlark.Callable:
			v, err := starlark.Call(&starlark.Thread{Name: "re.sub"}, r, starlark.Tuple{m}, nil)
			if err != nil {
				return nil, err
			}
			str, ok := v.(starlark.String)
			if !ok {
				return nil, fmt.Errorf("TypeError: expected str instance, %s found", v.Type())
			}
			b.WriteString(string(str))
		default:
			return nil, fmt.Errorf("TypeError: sub: repl must be a string or a function, not %s", repl.Type())
		}
		last = loc[1]
	}
	b.WriteString(s[last:])
	return starlark.String(b.String()), nil
}

var templateRef = regexp.MustCompile(`\\(\d+)|\\g<(\w+)>|\\(.)`)

// expandTemplate expands Python's replacement template for match m.
func expandTemplate(m *match, t string) (string, error) {
	var err error
	out := templateRef.ReplaceAllStringFunc(t, func(ref string) string {
		sub := templateRef.FindStringSubmatch(ref)
		switch {
		case sub[1] != "" || sub[2] != "":
			name := sub[1] + sub[2]
			g, gerr := m.groupIndex(starlark.String(name))
			if n, convErr := strconv.Atoi(name); convErr == nil {
				g, gerr = n, m.checkGroup(n)
			}
			if gerr != nil {
				err = gerr
				return ""
			}
			v := m.groupOr(g, starlark.String(""))
			return string(v.(starlark.String))
		}
		switch sub[3] {
		case "n":
			return "\n"
		case "t":
			return "\t"
		case "\\":
			return "\\"
		}
		return ref
	})
	return out, err
}

// pattern is a compiled pattern (re.compile).
type pattern struct{ re *regexp.Regexp }

func (p *pattern) String() string        { return fmt.Sprintf("re.compile(%q)", p.re.String()) }
func (p *pattern) Type() string          { return "re.Pattern" }
func (p *pattern) Freeze()               {}
func (p *pattern) Truth() starlark.Bool  { return true }
func (p *pattern) Hash() (uint32, error) { return starlark.String(p.re.String()).Hash() }
func (p *pattern) AttrNames() []string {
	return []string{"findall", "fullmatch", "match", "pattern", "search", "split", "sub"}
}
func (p *pattern) Attr(name string) (starlark.Value, error) {
	if name == "pattern" {
		return starlark.String(p.re.String()), nil
	}
	m, ok := patternMethods[name]
	if !ok {
		return nil, nil
	}
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		return m(p.re, args, kw)
	}), nil
}

// match is a match object: group, groups, groupdict, start, end, span.
type match struct {
	re  *regexp.Regexp
	s   string
	loc []int
}

func (m *match) String() string {
	return fmt.Sprintf("<re.Match object; span=(%d, %d), match=%q>", m.loc[0], m.loc[1], m.s[m.loc[0]:m.loc[1]])
}
func (m *match) Type() string         { return "re.Match" }
func (m *match) Freeze()              {}
func (m *match) Truth() starlark.Bool { return true }
func (m *match) Hash() (uint32, error) {
	return 0, fmt.Errorf("TypeError: unhashable type: 're.Match'")
}
func (m *match) AttrNames() []string {
	return []string{"end", "group", "groupdict", "groups", "span", "start", "string"}
}

func (m *match) checkGroup(i int) error {
	if i < 0 || i > m.re.NumSubexp() {
		return fmt.Errorf("IndexError: no such group")
	}
	return nil
}

func (m *match) groupIndex(v starlark.Value) (int, error) {
	if s, ok := v.(starlark.String); ok {
		if i := m.re.SubexpIndex(string(s)); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("IndexError: no such group")
	}
	i, err := starlark.AsInt32(v)
	if err != nil {
		return 0, fmt.Errorf("IndexError: no such group")
	}
	return i, m.checkGroup(i)
}

func (m *match) group(i int) starlark.Value { return m.groupOr(i, starlark.None) }

func (m *match) groupOr(i int, unmatched starlark.Value) starlark.Value {
	if m.loc[2*i] < 0 {
		return unmatched
	}
	return starlark.String(m.s[m.loc[2*i]:m.loc[2*i+1]])
}

func (m *match) Attr(name string) (starlark.Value, error) {
	if name == "string" {
		return starlark.String(m.s), nil
	}
	impl, ok := map[string]func(args starlark.Tuple) (starlark.Value, error){
		"group": func(args starlark.Tuple) (starlark.Value, error) {
			if len(args) == 0 {
				return m.group(0), nil
			}
			out := make(starlark.Tuple, len(args))
			for j, a := range args {
				i, err := m.groupIndex(a)
				if err != nil {
					return nil, err
				}
				out[j] = m.group(i)
			}
			if len(out) == 1 {
				return out[0], nil
			}
			return out, nil
		},
		"groups": func(args starlark.Tuple) (starlark.Value, error) {
			def := starlark.Value(starlark.None)
			if len(args) > 0 {
				def = args[0]
			}
			out := make(starlark.Tuple, m.re.NumSubexp())
			for i := range out {
				out[i] = m.groupOr(i+1, def)
			}
			return out, nil
		},
		"groupdict": func(starlark.Tuple) (starlark.Value, error) {
			d := starlark.NewDict(m.re.NumSubexp())
			for i, n := range m.re.SubexpNames() {
				if n != "" {
					_ = d.SetKey(starlark.String(n), m.group(i))
				}
			}
			return d, nil
		},
		"start": func(args starlark.Tuple) (starlark.Value, error) { return m.bound(args, 0) },
		"end":   func(args starlark.Tuple) (starlark.Value, error) { return m.bound(args, 1) },
		"span": func(args starlark.Tuple) (starlark.Value, error) {
			s, err := m.bound(args, 0)
			if err != nil {
				return nil, err
			}
			e, _ := m.bound(args, 1)
			return starlark.Tuple{s, e}, nil
		},
	}[name]
	if !ok {
		return nil, nil
	}
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		return impl(args)
	}), nil
}

// bound is the start (side 0) or end (side 1) of a group, in characters as Python counts.
func (m *match) bound(args starlark.Tuple, side int) (starlark.Value, error) {
	i := 0
	if len(args) > 0 {
		var err error
		if i, err = m.groupIndex(args[0]); err != nil {
			return nil, err
		}
	}
	at := m.loc[2*i+side]
	if at < 0 {
		return starlark.MakeInt(-1), nil
	}
	return starlark.MakeInt(len([]rune(m.s[:at]))), nil
}
