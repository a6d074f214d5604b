// Package diag carries configuration problems with their position in the pipeline file, so
// that every error a user sees reads "file:line:col: message" and all of them come at once.
package diag

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pos is a position in a pipeline file. Line and Col are 1-based; zero means unknown.
type Pos struct {
	File string
	Line int
	Col  int
}

// At returns the position of a YAML node in file.
func At(file string, n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: file}
	}
	return Pos{File: file, Line: n.Line, Col: n.Column}
}

// String formats the position as file:line:col, leaving out the parts that are unknown.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem in a pipeline file.
type Diagnostic struct {
	Pos
	// Path names the element the problem is in, e.g. "pipeline.transforms[2].config.fields".
	Path string
	// Summary is the one-line message.
	Summary string
	// Detail is an optional hint shown on the next line.
	Detail string
}

// Error formats the diagnostic as "file:line:col: summary" followed by the hint, if any.
func (d Diagnostic) Error() string {
	s := d.Pos.String() + ": " + d.Summary
	if d.Detail != "" {
		s += "\n\thint: " + d.Detail
	}
	return s
}

// List collects diagnostics. The zero value is ready to use.
type List []Diagnostic

// Add appends a diagnostic at pos.
func (l *List) Add(pos Pos, format string, args ...any) *Diagnostic {
	*l = append(*l, Diagnostic{Pos: pos, Summary: fmt.Sprintf(format, args...)})
	return &(*l)[len(*l)-1]
}

// Append adds all diagnostics of err to the list: a List, a Diagnostic, or any other error at pos.
func (l *List) Append(pos Pos, err error) {
	if err == nil {
		return
	}
	var list List
	var d Diagnostic
	switch {
	case errors.As(err, &list):
		*l = append(*l, list...)
	case errors.As(err, &d):
		*l = append(*l, d)
	default:
		l.Add(pos, "%s", err.Error())
	}
}

// Err returns the list as an error sorted by position, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	out := make(List, len(l))
	copy(out, l)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}

// Error formats every diagnostic, one (or two, with a hint) per line.
func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

// Suggest returns the candidate closest to name, or "" when none is close enough to be a
// plausible typo. It compares case-insensitively.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := levenshtein(lname, strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(1, min(3, len(name)/3))
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// DidYouMean returns " (did you mean "X"?)" for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// levenshtein returns the edit distance of a and b, counting a swap of two adjacent
// characters as one edit (the commonest typo: "nmae" for "name").
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
