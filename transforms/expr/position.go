package expr

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// filePos returns the file position of the rune at offset in e.Text. YAML folds plain,
// quoted and > scalars (a line break and the next line's indentation read as one space) and
// unescapes quoted ones, so offsets in the text do not map to columns directly: filePos walks
// the source lines and the text together. Without the lines it falls back to e.At.
func filePos(e component.Expr, lines []string, offset int) diag.Pos {
	text := []rune(e.Text)
	offset = max(0, min(offset, len(text)))
	if e.Pos.Line < 1 || e.Pos.Line > len(lines) || e.Pos.Col < 1 {
		line, col := lineCol(text, offset)
		return e.At(line, col)
	}
	style := yaml.Style(0)
	if e.Node != nil {
		style = e.Node.Style
	}
	w := walker{lines: lines, line: e.Pos.Line - 1, col: e.Pos.Col - 1, style: style}
	w.load()
	for _, v := range text[:offset] {
		w.consume(v)
	}
	if w.col >= len(w.src) && w.line+1 < len(lines) && offset < len(text) && !isSpace(text[offset]) {
		w.nextLine() // the next character starts a continuation line
	}
	return diag.Pos{File: e.Pos.File, Line: w.line + 1, Col: w.col + 1}
}

// lineCol returns the 1-based line and column of offset in text.
func lineCol(text []rune, offset int) (line, col int) {
	line, col = 1, 1
	for _, r := range text[:offset] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// walker follows a scalar's source text while its value is consumed rune by rune.
type walker struct {
	lines     []string
	line, col int // 0-based, col in runes of src
	src       []rune
	style     yaml.Style
}

func (w *walker) load() { w.src = []rune(w.lines[w.line]) }

// nextLine moves to the first non-blank column of the next line, and reports whether there
// was one.
func (w *walker) nextLine() bool {
	if w.line+1 >= len(w.lines) {
		w.col = len(w.src)
		return false
	}
	w.line++
	w.load()
	w.col = 0
	for w.col < len(w.src) && isSpace(w.src[w.col]) {
		w.col++
	}
	return true
}

func (w *walker) consume(v rune) {
	for {
		if w.col >= len(w.src) {
			if !w.nextLine() {
				return // the text runs past the file: stay at its end
			}
			if isSpace(v) {
				return // the line break (or a blank line) folded into v
			}
			continue
		}
		c := w.src[w.col]
		switch {
		case w.style == yaml.DoubleQuotedStyle && c == '\\':
			if w.col+1 >= len(w.src) {
				if !w.nextLine() { // an escaped line break reads as nothing
					return
				}
				continue
			}
			w.col += escapeLen(w.src[w.col+1])
		case w.style == yaml.SingleQuotedStyle && c == '\'' && w.col+1 < len(w.src) && w.src[w.col+1] == '\'':
			w.col += 2
		case c == v || !isSpace(v):
			w.col++
		default:
			// v is indentation or folded white space the source has already passed.
		}
		return
	}
}

// escapeLen is the source length of a double-quoted escape whose letter is c.
func escapeLen(c rune) int {
	switch c {
	case 'x':
		return 4
	case 'u':
		return 6
	case 'U':
		return 10
	}
	return 2
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
