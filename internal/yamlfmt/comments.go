package yamlfmt

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/internal/diag"
)

// comment is a full-line comment of the source.
type comment struct {
	line, col int // 1-based line, 0-based column of the '#'
	text      string
}

// commentLines splits a yaml.v3 comment into its non-empty lines.
func commentLines(c string) []string {
	var out []string
	for _, l := range strings.Split(c, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// scan walks the documents before printing. It marks the source lines that are scalar text
// (block scalar content, the inner lines of a quoted scalar) and finds the comments: it reads
// them from the source, outside quoted scalars, since yaml.v3 drops a few (after an empty
// sequence item, say), and places those that yaml.v3 read and the reading missed (libyaml
// takes "|#c" as a block indicator and a comment). It returns the lines of block scalar
// content and the comments of the source counted by text.
func (p *printer) scan(docs []*yaml.Node) (map[int]bool, map[string]int) {
	block := map[int]bool{}
	quoted := map[int][][2]int{} // per line, the columns of quoted text (first, last)
	var nodes []*yaml.Node
	// parent is the source column of the block that n is an entry of, -1 at the root.
	var walk func(n *yaml.Node, parent int)
	walk = func(n *yaml.Node, parent int) {
		nodes = append(nodes, n)
		switch {
		case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			e := blockExtent(p.src, n, parent)
			p.blocks[n] = e
			for i := e.first; i <= e.last; i++ {
				block[i], p.text[i] = true, true
			}
		case n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
			p.quoted(n, quoted)
		}
		for _, c := range n.Content {
			switch n.Kind {
			case yaml.MappingNode:
				walk(c, mapCol(n))
			case yaml.SequenceNode:
				walk(c, p.dashCol(n))
			default:
				walk(c, parent)
			}
		}
	}
	for _, d := range docs {
		walk(d, -1)
	}
	lexed := map[string]int{}
	used := map[int]bool{}
	for i, l := range p.src {
		if p.text[i+1] {
			continue
		}
		if l == "---" || strings.HasPrefix(l, "--- ") {
			p.markers = append(p.markers, i+1)
		}
		j := commentStart(l, quoted[i+1])
		if j < 0 {
			continue
		}
		t := strings.TrimRight(l[j:], " \t")
		lexed[t]++
		if strings.TrimSpace(l[:j]) == "" {
			p.full = append(p.full, comment{i + 1, j, t})
		} else {
			p.trailing[i+1] = t
			used[i+1] = true
		}
	}
	// The comments that yaml.v3 read and the reading did not find, longer ones first ("# a"
	// must not take the line of "# b # a").
	type found struct {
		text string
		line int
	}
	var rest []found
	yamlCount := map[string]int{}
	for _, n := range nodes {
		for _, l := range commentLines(n.LineComment + "\n" + n.HeadComment + "\n" + n.FootComment) {
			rest = append(rest, found{l, n.Line})
			yamlCount[l]++
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return len(rest[i].text) > len(rest[j].text) })
	left := maps.Clone(lexed)
	for _, c := range rest {
		if left[c.text] > 0 {
			left[c.text]--
		} else if l := p.findTrailing(c.text, c.line, used); l > 0 {
			used[l] = true
			p.trailing[l] = c.text
			lexed[c.text]++
		} else {
			p.errs.Add(diag.Pos{File: p.file, Line: max(c.line, 1), Col: 1},
				"cannot tell where the comment %q is: not formatted", c.text).
				Detail = "separate the comment from what it follows with a space"
		}
	}
	for t, n := range yamlCount {
		lexed[t] = max(lexed[t], n)
	}
	p.trailingLines = slices.Sorted(maps.Keys(p.trailing))
	return block, lexed
}

// quoted records where the quoted scalar n is in the source: its inner lines as text, and the
// columns of its first and last line in quoted.
func (p *printer) quoted(n *yaml.Node, quoted map[int][][2]int) {
	q := byte('"')
	if n.Style&yaml.SingleQuotedStyle != 0 {
		q = '\''
	}
	if n.Line < 1 || n.Line > len(p.src) {
		return
	}
	line := p.src[n.Line-1]
	col := min(max(n.Column-1, 0), len(line))
	open := strings.IndexByte(line[col:], q)
	endLine, endCol := p.quotedEnd(n.Line, col, q)
	if open < 0 || endCol < 0 {
		return
	}
	if endLine == n.Line {
		quoted[n.Line] = append(quoted[n.Line], [2]int{col + open, endCol})
		return
	}
	quoted[n.Line] = append(quoted[n.Line], [2]int{col + open, len(line)})
	for i := n.Line + 1; i < endLine; i++ {
		p.text[i] = true
	}
	quoted[endLine] = append(quoted[endLine], [2]int{0, endCol})
}

// commentStart returns the column of the comment on line l, whose quoted text is at the
// given columns, or -1: a '#' at the start or after a space or tab, outside quotes.
func commentStart(l string, quoted [][2]int) int {
	for j := 0; j < len(l); j++ {
		if l[j] != '#' || j > 0 && l[j-1] != ' ' && l[j-1] != '\t' {
			continue
		}
		if !slices.ContainsFunc(quoted, func(r [2]int) bool { return r[0] <= j && j <= r[1] }) {
			return j
		}
	}
	return -1
}

// findTrailing returns the content line nearest to hint that ends with the comment c, after
// a space if any does (libyaml also takes "|#c" as a block indicator and a comment).
func (p *printer) findTrailing(c string, hint int, used map[int]bool) int {
	for _, strict := range []bool{true, false} {
		for d := 0; d <= len(p.src); d++ {
			for _, l := range []int{hint - d, hint + d} {
				if l < 1 || l > len(p.src) || used[l] || p.text[l] {
					continue
				}
				s := strings.TrimRight(p.src[l-1], " \t")
				before, ok := strings.CutSuffix(s, c)
				if ok && strings.TrimSpace(before) != "" && !strings.HasPrefix(strings.TrimSpace(s), "#") &&
					(!strict || strings.HasSuffix(before, " ") || strings.HasSuffix(before, "\t")) {
					return l
				}
			}
		}
	}
	return 0
}

// commentBetween reports whether a full-line comment lies between lines a and b.
func (p *printer) commentBetween(a, b int) bool {
	i := sort.Search(len(p.full), func(i int) bool { return p.full[i].line > a })
	return i < len(p.full) && p.full[i].line < b
}

// flush prints the comments of the source lines before line: the end-of-line comments on
// the output line they were on (the last one made from that source line, or one that spans
// it, or else the next one), and the full-line comments as lines of their own.
func (p *printer) flush(line int) {
	for len(p.trailingLines) > 0 && p.trailingLines[0] < line {
		l := p.trailingLines[0]
		p.trailingLines = p.trailingLines[1:]
		c := p.trailing[l]
		delete(p.trailing, l)
		target := -1
		for i := len(p.out) - 1; i >= 0; i-- {
			o := p.out[i]
			if o.verbatim || o.srcStart == 0 || o.srcStart > l {
				continue
			}
			if o.srcStart == l || o.srcEnd >= l {
				target = i
			}
			break
		}
		switch {
		case target >= 0 && !p.out[target].commented:
			p.out[target].text += " " + c
			p.out[target].commented = true
		case target >= 0:
			// A second comment for one output line (a tag and its value on two lines, say):
			// it goes on a line of its own after it, so that each stays one comment.
			at := target + 1
			for at < len(p.out) && p.out[at].verbatim {
				at++
			}
			ind := leadingSpaces(p.out[target].text)
			p.out = append(p.out[:at], append([]outLine{{text: spaces(ind) + c, srcStart: l, srcEnd: l}}, p.out[at:]...)...)
		case p.carry == "":
			p.carry = c
		default:
			p.out = append(p.out, outLine{text: spaces(p.levelFor(math.MaxInt)) + c, srcStart: l, srcEnd: l})
		}
	}
	for len(p.full) > 0 && p.full[0].line < line {
		c := p.full[0]
		p.full = p.full[1:]
		p.out = append(p.out, outLine{text: spaces(p.levelFor(c.col)) + c.text, srcStart: c.line, srcEnd: c.line})
	}
}

// levelFor returns the indentation for a full-line comment at source column col: that of the
// level whose source column is the closest at or left of it, among the levels open at the last
// content line and at the next one. Of two levels at the same column (a sequence written
// without indentation under its key), the inner one wins if it goes on at the next line (the
// comment is between its items), the outer one otherwise.
func (p *printer) levelFor(col int) int {
	best, bestOpen := level{0, 0}, false
	for _, cands := range [][]level{p.recent, p.levels} {
		for _, cd := range cands {
			if cd.srcCol > col || cd.srcCol < best.srcCol {
				continue
			}
			open := slices.Contains(p.levels, cd)
			if cd.srcCol > best.srcCol || open && (!bestOpen || cd.ind > best.ind) || !open && !bestOpen && cd.ind < best.ind {
				best, bestOpen = cd, open
			}
		}
	}
	return best.ind
}
