package python

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Rewriting Python into Starlark before compiling: import lines become predeclared names,
// `is` / `is not` become == / !=, f-strings become str.format calls. Each rewrite keeps a
// map from the rewritten text back to the user's, so that errors point into what they wrote.

// anchor maps a rune offset of the rewritten text to one of the original: a copied span
// maps rune for rune; generated text maps to the construct it stands for.
type anchor struct {
	gen, orig int
	copied    bool
}

// posMap maps offsets of rewritten text to the original's.
type posMap []anchor

func (m posMap) orig(gen int) int {
	i := sort.Search(len(m), func(i int) bool { return m[i].gen > gen }) - 1
	if i < 0 {
		return gen
	}
	a := m[i]
	if a.copied {
		return a.orig + gen - a.gen
	}
	return a.orig
}

// importSpec is one name an import line binds: `import re` binds re to the module re,
// `from math import sqrt as root` binds root to math's sqrt (member "sqrt").
type importSpec struct {
	name, module, member string
	offset               int // of the module's name, for errors
	memberOffset         int // of the member's name (from ... import member)
}

// srcError is a problem at a rune offset of the user's text.
type srcError struct {
	offset int
	msg    string
	hint   string
}

// rewritten is the Starlark text of the user's Python.
type rewritten struct {
	text    string
	pos     posMap
	imports []importSpec
	errs    []srcError
	closes  map[int]bool // offsets of ')' that close a generator expression made a list
}

type rewriter struct {
	src     []rune
	out     []rune
	pos     posMap
	copyAt  int // the start of the span not yet copied
	imports []importSpec
	errs    []srcError
	closes  map[int]bool // offsets of ')' that close a generator expression made a list
}

// rewrite turns Python text into Starlark text.
func rewrite(text string) rewritten {
	w := &rewriter{src: []rune(text)}
	w.scan()
	w.flush(len(w.src))
	return rewritten{text: string(w.out), pos: w.pos, imports: w.imports, errs: w.errs}
}

// flush copies the original text up to end.
func (w *rewriter) flush(end int) {
	if end > w.copyAt {
		w.pos = append(w.pos, anchor{gen: len(w.out), orig: w.copyAt, copied: true})
		w.out = append(w.out, w.src[w.copyAt:end]...)
	}
	w.copyAt = max(w.copyAt, end)
}

// replace puts s in place of the original runes [from, to).
func (w *rewriter) replace(from, to int, s string) {
	w.flush(from)
	w.pos = append(w.pos, anchor{gen: len(w.out), orig: from})
	w.out = append(w.out, []rune(s)...)
	w.copyAt = to
}

func (w *rewriter) errorf(offset int, format string, args ...any) {
	w.errs = append(w.errs, srcError{offset: offset, msg: fmt.Sprintf(format, args...)})
}

// scan walks the text, skipping strings and comments, and rewrites what it must.
func (w *rewriter) scan() {
	src := w.src
	depth := 0
	lineStart := true
	for i := 0; i < len(src); {
		r := src[i]
		switch {
		case r == '\n':
			lineStart = depth == 0
			i++
			continue
		case r == ' ' || r == '\t' || r == '\r':
			i++
			continue
		case r == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case r == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			continue
		}
		atLineStart := lineStart
		lineStart = false
		switch {
		case strings.ContainsRune("([{", r):
			if r == '(' {
				w.generator(i)
			}
			depth++
			i++
		case strings.ContainsRune(")]}", r):
			if w.closes[i] {
				w.replace(i, i, "]")
			}
			depth = max(0, depth-1)
			i++
		case isIdentStart(r):
			j := i
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := string(src[i:j])
			if q, ok := stringStart(src, i, j); ok {
				i, depth = w.literalAt(i, q, strings.ContainsAny(word, "fF"), depth)
				continue
			}
			i = w.word(word, i, j, atLineStart)
		case r == '"' || r == '\'':
			i, depth = w.literalAt(i, i, false, depth)
		default:
			i++
		}
	}
}

// word handles an identifier or keyword at [i, j) and returns where scanning goes on.
func (w *rewriter) word(word string, i, j int, atLineStart bool) int {
	switch {
	case atLineStart && (word == "import" || word == "from"):
		end := i
		for end < len(w.src) && w.src[end] != '\n' {
			end++
		}
		w.importLine(i, end)
		w.replace(i, end, strings.Repeat(" ", end-i))
		return end
	case word == "def":
		return w.defHeader(j)
	case word == "is":
		k := j
		for k < len(w.src) && (w.src[k] == ' ' || w.src[k] == '\t') {
			k++
		}
		if k+3 <= len(w.src) && string(w.src[k:k+3]) == "not" && (k+3 == len(w.src) || !isIdentPart(w.src[k+3])) {
			w.replace(i, k+3, "!="+strings.Repeat(" ", k+3-i-2))
			return k + 3
		}
		w.replace(i, j, "==")
	}
	return j
}

// generator makes the generator expression in the parentheses at open a list
// comprehension, which Starlark has: any(x > 0 for x in xs) reads any([x > 0 for x in xs]).
// The parentheses hold a generator when a `for` stands at their top level and no comma does.
func (w *rewriter) generator(open int) {
	src := w.src
	depth, hasFor := 0, false
	for j := open; j < len(src); j++ {
		switch r := src[j]; {
		case r == '"' || r == '\'':
			j = w.skipString(j) - 1
		case r == '#':
			for j < len(src) && src[j] != '\n' {
				j++
			}
		case strings.ContainsRune("([{", r):
			depth++
		case strings.ContainsRune(")]}", r):
			depth--
			if depth == 0 {
				if hasFor {
					w.replace(open+1, open+1, "[")
					if w.closes == nil {
						w.closes = map[int]bool{}
					}
					w.closes[j] = true
				}
				return
			}
		case depth == 1 && r == ',':
			return
		case depth == 1 && r == 'f' && hasAt(src, j, "for") && (j == 0 || !isIdentPart(src[j-1])) &&
			(j+3 == len(src) || !isIdentPart(src[j+3])):
			hasFor = true
		}
	}
}

// defHeader blanks the type annotations of the def header starting after `def` at i
// (`row: beam.Row`, `-> str`), which Starlark does not parse, and returns the offset after
// the header's colon.
func (w *rewriter) defHeader(i int) int {
	src := w.src
	open := i
	for open < len(src) && src[open] != '(' && src[open] != ':' && src[open] != '\n' {
		open++
	}
	if open >= len(src) || src[open] != '(' {
		return i
	}
	depth, annotation := 0, -1
	j := open
	for ; j < len(src); j++ {
		switch r := src[j]; {
		case r == '"' || r == '\'':
			j = w.skipString(j) - 1
		case strings.ContainsRune("([{", r):
			depth++
		case strings.ContainsRune(")]}", r):
			depth--
			if depth == 0 {
				w.blank(annotation, j)
				annotation = -1
			}
		case depth == 1 && (r == ',' || r == '='):
			w.blank(annotation, j)
			annotation = -1
		case depth == 1 && r == ':' && annotation < 0:
			annotation = j
		}
		if depth == 0 {
			break
		}
	}
	k := j + 1
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	end := k
	for end < len(src) && src[end] != ':' && src[end] != '\n' {
		end++
	}
	if hasAt(src, k, "->") {
		w.blank(k, end)
	}
	return min(end+1, len(src))
}

// blank replaces the runes [from, to) with spaces (keeping line breaks); from < 0 is nothing.
func (w *rewriter) blank(from, to int) {
	if from < 0 || to <= from {
		return
	}
	spaces := make([]rune, to-from)
	for i := range spaces {
		spaces[i] = ' '
		if w.src[from+i] == '\n' {
			spaces[i] = '\n'
		}
	}
	w.replace(from, to, string(spaces))
}

// skipString returns the offset after the string literal whose quote is at q.
func (w *rewriter) skipString(q int) int {
	quote := w.src[q]
	for i := q + 1; i < len(w.src); i++ {
		switch w.src[i] {
		case '\\':
			i++
		case quote:
			return i + 1
		}
	}
	return len(w.src)
}

// importLine records the names an import line binds.
func (w *rewriter) importLine(start, end int) {
	line := string(w.src[start:end])
	if c := strings.IndexByte(line, '#'); c >= 0 {
		line = line[:c]
	}
	offsetOf := func(s string) int { return start + len([]rune(line[:max(0, strings.Index(line, s))])) }
	fields := strings.Fields(strings.NewReplacer(",", " , ").Replace(line))
	if fields[0] == "from" {
		if len(fields) < 4 || fields[2] != "import" {
			w.errorf(start, "cannot read this import line")
			return
		}
		module := fields[1]
		names := strings.Index(line, " import ")
		for _, item := range splitImports(fields[3:]) {
			name := item[len(item)-1]
			member := start + len([]rune(line[:names+max(0, strings.Index(line[names:], item[0]))]))
			w.imports = append(w.imports, importSpec{name: name, module: module, member: item[0], offset: offsetOf(module), memberOffset: member})
		}
		return
	}
	for _, item := range splitImports(fields[1:]) {
		w.imports = append(w.imports, importSpec{name: item[len(item)-1], module: item[0], offset: offsetOf(item[0])})
	}
}

// splitImports splits "a as b , c" into [[a b] [c]], dropping parentheses.
func splitImports(fields []string) [][]string {
	var out [][]string
	var cur []string
	for _, f := range fields {
		f = strings.Trim(f, "()")
		switch f {
		case "", "as":
			continue
		case ",":
			if cur != nil {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, f)
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// stringStart reports whether the identifier [i, j) is a string prefix (r, b, f, u and
// their pairs) directly followed by a quote; q is then the quote's offset.
func stringStart(src []rune, i, j int) (q int, ok bool) {
	if j >= len(src) || (src[j] != '"' && src[j] != '\'') || j-i > 2 {
		return 0, false
	}
	for _, r := range src[i:j] {
		if !strings.ContainsRune("rRbBfFuU", r) {
			return 0, false
		}
	}
	return j, true
}

// formatCall is the method call sluice runs with Python's format specs ("{:.2f}".format(x)
// reads _py_format("{:.2f}", x)); Starlark's str.format has no specs.
const formatCall = ".format("

// literalAt rewrites the literal at start (quote at q) and, when a .format( call follows a
// plain literal, the call into _py_format; it returns where scanning goes on and the
// bracket depth after (the call's parenthesis is then open).
func (w *rewriter) literalAt(start, q int, fstring bool, depth int) (int, int) {
	if !fstring {
		if end := w.skipLiteral(start, q); hasAt(w.src, end, formatCall) {
			w.replace(start, start, "_py_format(")
			w.stringLiteral(start, q, false)
			w.replace(end, end+len(formatCall), ", ")
			return end + len(formatCall), depth + 1
		}
	}
	return w.stringLiteral(start, q, fstring), depth
}

// skipLiteral returns the offset after the literal whose quote is at q.
func (w *rewriter) skipLiteral(start, q int) int {
	if q+2 < len(w.src) && w.src[q+1] == w.src[q] && w.src[q+2] == w.src[q] {
		quote := string(w.src[q : q+3])
		for i := q + 3; i < len(w.src); i++ {
			if w.src[i] == '\\' {
				i++
			} else if hasAt(w.src, i, quote) {
				return i + 3
			}
		}
		return len(w.src)
	}
	if strings.ContainsAny(string(w.src[start:q]), "rR") {
		for i := q + 1; i < len(w.src); i++ {
			if w.src[i] == w.src[q] {
				return i + 1
			}
			if w.src[i] == '\\' {
				i++
			}
		}
		return len(w.src)
	}
	return w.skipString(q)
}

// stringLiteral skips the literal whose prefix starts at start and quote at q, rewriting it
// when it is an f-string; it returns the offset after the literal.
func (w *rewriter) stringLiteral(start, q int, fstring bool) int {
	src := w.src
	quote := string(src[q])
	if q+2 < len(src) && src[q+1] == src[q] && src[q+2] == src[q] {
		quote = strings.Repeat(quote, 3)
	}
	raw := strings.ContainsAny(string(src[start:q]), "rR")
	body := q + len(quote)
	end := body
	for end < len(src) && !hasAt(src, end, quote) {
		if src[end] == '\\' && !raw {
			end++
		} else if src[end] == '\n' && len(quote) == 1 {
			break // unterminated: the compiler reports it
		}
		end++
	}
	after := min(len(src), end+len(quote))
	switch {
	case fstring && end < len(src):
		w.fstring(start, q, body, end, after, quote, raw)
	case !raw:
		for i := body; i < end; i++ {
			i = w.escape(i)
		}
	}
	return after
}

// escape doubles the backslash at i when it starts an escape Starlark rejects and Python
// keeps as written ("\s" in a pattern); it returns the offset of the escape's last rune.
func (w *rewriter) escape(i int) int {
	if w.src[i] != '\\' || i+1 >= len(w.src) {
		return i
	}
	if !strings.ContainsRune("abfnrtv\\'\"01234567xuUN\n", w.src[i+1]) {
		w.flush(i)
		w.replace(i, i+1, `\\`)
	}
	return i + 1
}

func hasAt(src []rune, i int, s string) bool {
	return i+len(s) <= len(src) && string(src[i:i+len(s)]) == s
}

// fstring rewrites f"a{x!r}b{y:.2f}" as _py_format("a{!r}b{:.2f}", x, y): str.format with
// Python's conversions and format specs.
func (w *rewriter) fstring(start, q, body, end, after int, quote string, raw bool) {
	src := w.src
	prefix := strings.NewReplacer("f", "", "F", "").Replace(string(src[start:q]))
	w.replace(start, body, "_py_format("+prefix+quote)
	type arg struct{ from, to int }
	var args []arg
	for i := body; i < end; i++ {
		switch {
		case src[i] == '\\' && !raw:
			i = w.escape(i)
		case src[i] == '{' && i+1 < end && src[i+1] == '{', src[i] == '}' && i+1 < end && src[i+1] == '}':
			i++
		case src[i] == '{':
			a, close := w.replacementField(i+1, end)
			if close < 0 {
				w.errorf(i, "f-string: expecting '}'")
				return
			}
			w.flush(i + 1)
			w.replace(i+1, a.to, "") // the expression becomes an argument; !conv and :spec stay
			args = append(args, arg{a.from, a.to})
			i = close
		}
	}
	w.flush(end)
	w.replace(end, after, quote)
	for _, a := range args {
		w.emit(", ", a.from)
		w.copySpan(a.from, a.to)
	}
	w.emit(")", after-1)
}

// emit appends generated text standing for the original offset orig.
func (w *rewriter) emit(s string, orig int) {
	w.pos = append(w.pos, anchor{gen: len(w.out), orig: orig})
	w.out = append(w.out, []rune(s)...)
}

// copySpan appends the original runes [from, to) out of order (an f-string's expressions).
func (w *rewriter) copySpan(from, to int) {
	w.pos = append(w.pos, anchor{gen: len(w.out), orig: from, copied: true})
	w.out = append(w.out, w.src[from:to]...)
}

// field is a replacement field of an f-string: the expression, the conversion (!r) and the
// format spec; -1 when absent.
type field struct{ from, to, convFrom, convTo, specFrom, specTo int }

// replacementField reads the field starting at i (after its '{') and returns it and the
// offset of its closing '}', -1 when there is none.
func (w *rewriter) replacementField(i, end int) (field, int) {
	src := w.src
	f := field{from: i, convFrom: -1, specFrom: -1}
	depth := 0
	var quote rune
	for j := i; j < end; j++ {
		r := src[j]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case strings.ContainsRune("([{", r):
			depth++
		case strings.ContainsRune(")]", r) || (r == '}' && depth > 0):
			depth--
		case depth == 0 && r == '!' && j+1 < end && src[j+1] != '=':
			f.to, f.convFrom = j, j
			for j < end && src[j] != ':' && src[j] != '}' {
				j++
			}
			f.convTo = j
			j--
		case depth == 0 && r == ':':
			if f.convFrom < 0 {
				f.to = j
			}
			f.specFrom = j + 1
			for j < end && src[j] != '}' {
				j++
			}
			f.specTo = j
			return f, j
		case depth == 0 && r == '}':
			if f.convFrom < 0 {
				f.to = j
			}
			return f, j
		}
	}
	return f, -1
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
