package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is a lexical token of the user's query text, for the rewriting pass.
type token struct {
	kind       tokenKind
	start, end int // byte offsets in the text
}

type tokenKind int

const (
	tokWord tokenKind = iota
	tokString
	tokNumber
	tokQuoted // a `backtick` or "double-quoted" identifier
	tokPunct
)

// tokens splits text into tokens, leaving out spaces and comments. An unterminated string
// or quoted identifier runs to the end, for the parser to report.
func tokens(text string) []token {
	var out []token
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(text[i:], "--"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 4
			}
		case c == '\'' || c == '`' || c == '"':
			start := i
			i++
			for i < len(text) {
				if text[i] == c {
					if i+1 < len(text) && text[i+1] == c { // a doubled quote
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			k := tokString
			if c != '\'' {
				k = tokQuoted
			}
			out = append(out, token{k, start, i})
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9':
			start := i
			for i < len(text) && (isWordByte(text[i]) || text[i] == '.') {
				i++
			}
			out = append(out, token{tokNumber, start, i})
		case isWordByte(c) || c >= utf8.RuneSelf:
			start := i
			for i < len(text) {
				r, n := utf8.DecodeRuneInString(text[i:])
				if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
					break
				}
				i += n
			}
			if i == start {
				_, n := utf8.DecodeRuneInString(text[i:])
				i += n
				out = append(out, token{tokPunct, start, i})
				continue
			}
			out = append(out, token{tokWord, start, i})
		default:
			out = append(out, token{tokPunct, i, i + 1})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// clauses are the keywords that may follow a missing alias; they are not quoted as one.
var clauses = map[string]bool{"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true,
	"LIMIT": true, "UNION": true, "JOIN": true, "ON": true, "SELECT": true, "AND": true, "OR": true}

// rewritten is the text the parser reads, with the byte offset in the user's text of each
// of its bytes.
type rewritten struct {
	text string
	orig []int // len(text)+1
}

// builder builds a rewritten text.
type builder struct {
	b    strings.Builder
	orig []int
}

// add appends s, whose bytes come from offset at of the user's text (each byte its own
// offset when copied, all at at when generated).
func (w *builder) add(s string, at int, copied bool) {
	for i := range len(s) {
		if copied {
			w.orig = append(w.orig, at+i)
		} else {
			w.orig = append(w.orig, at)
		}
	}
	w.b.WriteString(s)
}

// Function names the rewriting gives Calcite's constructs; they cannot clash with a user's
// function, which the compiler would not know anyway.
const (
	intervalFn = "sluice_interval"
	castFn     = "sluice_cast"
	// sessionFn is SESSION(ts, gap): SESSION is a keyword of TiDB's parser.
	sessionFn = "sluice_session"
)

// fnName is the lower-case name of a called function as the user wrote it.
func fnName(e *ast.FuncCallExpr) string {
	if e.FnName.L == sessionFn {
		return "session"
	}
	return e.FnName.L
}

// rewrite spells what TiDB's parser lacks in a form it reads, keeping offsets:
//
//	INTERVAL '5' MINUTE  -> sluice_interval('5', 'MINUTE')
//	CAST(x AS VARCHAR)   -> sluice_cast(x, 'VARCHAR')
//	TRUE, FALSE          -> (1=1), (1=0)
//	SESSION(             -> sluice_session(
//	FULL [OUTER] JOIN    -> STRAIGHT_JOIN
//	AS rank              -> AS `rank`
func rewrite(text string) rewritten {
	toks := tokens(text)
	w := &builder{}
	last := 0 // bytes of text copied so far
	copyTo := func(end int) {
		w.add(text[last:end], last, true)
		last = end
	}
	word := func(i int, s string) bool {
		return i < len(toks) && toks[i].kind == tokWord && strings.EqualFold(text[toks[i].start:toks[i].end], s)
	}
	punct := func(i int, s string) bool {
		return i < len(toks) && toks[i].kind == tokPunct && text[toks[i].start:toks[i].end] == s
	}
	// casts holds, for each CAST( being read, the paren depth inside it.
	var casts []int
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case word(i, "INTERVAL") && i+2 < len(toks) && (toks[i+1].kind == tokString || toks[i+1].kind == tokNumber) && toks[i+2].kind == tokWord:
			copyTo(t.start)
			w.add(intervalFn+"(", t.start, false)
			lit := toks[i+1]
			w.add(text[lit.start:lit.end], lit.start, true)
			unit := toks[i+2]
			w.add(", '"+strings.ToUpper(text[unit.start:unit.end])+"')", unit.start, false)
			last = unit.end
			i += 2
		case word(i, "CAST") && punct(i+1, "("):
			copyTo(t.start)
			w.add(castFn, t.start, false)
			last = t.end
			depth++
			casts = append(casts, depth)
			i++
			copyTo(toks[i].end)
		case word(i, "AS") && len(casts) > 0 && casts[len(casts)-1] == depth:
			// The type runs to the cast's closing parenthesis.
			j, d := i+1, 0
			for j < len(toks) && (d > 0 || !punct(j, ")")) {
				if punct(j, "(") {
					d++
				} else if punct(j, ")") {
					d--
				}
				j++
			}
			if j == i+1 || j >= len(toks) {
				continue // no type: the parser reports it
			}
			copyTo(t.start)
			typ := text[toks[i+1].start:toks[j-1].end]
			w.add(", '"+strings.ToUpper(strings.Join(strings.Fields(typ), " "))+"'", toks[i+1].start, false)
			last = toks[j-1].end
			casts = casts[:len(casts)-1]
			depth--
			i = j // the closing parenthesis
			copyTo(toks[j].start)
		case word(i, "AS") && i+1 < len(toks) && toks[i+1].kind == tokWord && !clauses[strings.ToUpper(text[toks[i+1].start:toks[i+1].end])]:
			// An alias is a name even when it is one of MySQL's keywords (rank, until, lead):
			// quote it.
			alias := toks[i+1]
			copyTo(alias.start)
			w.add("`", alias.start, false)
			w.add(text[alias.start:alias.end], alias.start, true)
			w.add("`", alias.end, false)
			last = alias.end
			i++
		case word(i, "SESSION") && punct(i+1, "("):
			copyTo(t.start)
			w.add(sessionFn, t.start, false)
			last = t.end
		case word(i, "FULL") && (word(i+1, "JOIN") || word(i+1, "OUTER") && word(i+2, "JOIN")):
			// MySQL has no FULL JOIN (it would read FULL as an alias): STRAIGHT_JOIN, which
			// Calcite does not have, stands for it (joinKind).
			end := i + 1
			if word(end, "OUTER") {
				end++
			}
			copyTo(t.start)
			w.add("STRAIGHT_JOIN", t.start, false)
			last = toks[end].end
			i = end
		case word(i, "STRAIGHT_JOIN"):
			copyTo(t.start)
			w.add("`", t.start, false) // not Calcite's: a name, which the parser refuses here
			w.add(text[t.start:t.end], t.start, true)
			w.add("`", t.end, false)
			last = t.end
		case word(i, "TRUE") || word(i, "FALSE"):
			copyTo(t.start)
			lit := "(1=1)"
			if word(i, "FALSE") {
				lit = "(1=0)"
			}
			w.add(lit, t.start, false)
			last = t.end
		case punct(i, "("):
			depth++
		case punct(i, ")"):
			if len(casts) > 0 && casts[len(casts)-1] == depth {
				casts = casts[:len(casts)-1]
			}
			depth--
		}
	}
	copyTo(len(text))
	w.orig = append(w.orig, len(text))
	return rewritten{text: w.b.String(), orig: w.orig}
}

// origin returns the byte offset in the user's text of byte offset off of the rewritten one.
func (r rewritten) origin(off int) int {
	if off < 0 {
		return 0
	}
	if off >= len(r.orig) {
		return r.orig[len(r.orig)-1]
	}
	return r.orig[off]
}
