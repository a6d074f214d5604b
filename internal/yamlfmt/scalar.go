package yamlfmt

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// scalar renders a plain or quoted scalar on one line, with its anchor and written tag. A
// scalar on one line is copied as written: quotes are never added or removed, since a quote
// that yaml.v3 does not need may be needed by Beam's parser (PyYAML reads YAML 1.1, where yes,
// on and 0777 are not strings), and escapes stay as they are. A scalar over several lines is
// joined on one line by the encoder, double-quoted if its value holds a line break.
func (p *printer) scalar(n *yaml.Node) string {
	pre := ""
	if n.Anchor != "" {
		pre = "&" + n.Anchor + " "
	}
	if n.Style&yaml.TaggedStyle != 0 {
		pre += tagText(n.Tag) + " "
	}
	style := n.Style &^ yaml.TaggedStyle
	switch {
	case n.Value == "" && style == 0 && n.Tag == "!!null":
		return strings.TrimSpace(pre)
	case style == 0 && n.Value != "" && !strings.Contains(n.Value, "\n") &&
		(n.Style&yaml.TaggedStyle != 0 || plainTag(n.Value) == n.Tag):
		return pre + n.Value
	case style == yaml.DoubleQuotedStyle || style == yaml.SingleQuotedStyle:
		if s, ok := p.quotedText(n); ok {
			return pre + s
		}
	}
	c := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: n.Value, Style: yaml.DoubleQuotedStyle}
	switch {
	case style == 0 && !strings.Contains(n.Value, "\n") && n.Style&yaml.TaggedStyle == 0:
		// A plain scalar whose tag came from elsewhere (the non-specific tag "!"): the
		// encoder quotes it if it would read as another type.
		c.Tag, c.Style = n.Tag, 0
	case style == yaml.SingleQuotedStyle && !strings.Contains(n.Value, "\n"):
		c.Style = yaml.SingleQuotedStyle
	}
	b, err := yaml.Marshal(c)
	s := strings.TrimSuffix(string(b), "\n")
	if err != nil || strings.Contains(s, "\n") {
		p.errorAt(n, "cannot format this value on one line")
		return pre + n.Value
	}
	return pre + s
}

// plainTag returns the tag that a plain scalar with this value resolves to, "" when it would
// not be read as one scalar.
func plainTag(value string) string {
	if value == "<<" {
		return "!!merge"
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) != 1 ||
		doc.Content[0].Kind != yaml.ScalarNode || doc.Content[0].Value != value {
		return ""
	}
	return doc.Content[0].Tag
}

// quotedText returns a quoted scalar as written, when it is on one line.
func (p *printer) quotedText(n *yaml.Node) (string, bool) {
	q := byte('"')
	if n.Style&yaml.SingleQuotedStyle != 0 {
		q = '\''
	}
	if n.Line < 1 || n.Line > len(p.src) {
		return "", false
	}
	line := p.src[n.Line-1]
	col := min(max(n.Column-1, 0), len(line))
	open := strings.IndexByte(line[col:], q)
	if open < 0 {
		return "", false
	}
	endLine, endCol := p.quotedEnd(n.Line, col, q)
	if endLine != n.Line {
		return "", false
	}
	return line[col+open : endCol+1], true
}

// extent is where a block scalar's content is in the source.
type extent struct {
	ci          int // the content's indentation
	first, last int // the first and last content lines (1-based); last < first when none
	ok          bool
}

// blockScalar renders a literal or folded scalar: its header ("|", ">-", "|2+"...) and its
// content lines, copied from the source and re-indented under parent (the indentation of the
// key or "- " it belongs to). Copying keeps the line breaks of a folded scalar, which the
// encoder would refold, and the value itself is unchanged by construction.
func (p *printer) blockScalar(n *yaml.Node, parent int) (string, []string, int) {
	header := blockHeader(p.src, n)
	e := p.blocks[n]
	if header == "" || !e.ok {
		p.errorAt(n, "cannot find the lines of this block scalar")
		return "", nil, n.Line
	}
	strip := !strings.HasSuffix(n.Value, "\n")
	if strip && !strings.Contains(header, "-") {
		// A block scalar at the end of a file without a final line break has none either:
		// with the line break that the output ends with, only "-" keeps it so.
		header = strings.ReplaceAll(header, "+", "") + "-"
	}
	ind := parent + indent
	if i := strings.IndexAny(header, "123456789"); i >= 0 {
		ind = parent + int(header[i]-'0')
	}
	pre := ""
	if n.Style&yaml.TaggedStyle != 0 {
		pre = tagText(n.Tag) + " "
	}
	if n.Anchor != "" {
		pre += "&" + n.Anchor + " "
	}
	var content []string
	for i := e.first; i <= e.last; i++ {
		l := p.src[i-1]
		if emptyIn(l, e.ci) {
			content = append(content, "")
			continue
		}
		content = append(content, spaces(ind)+l[e.ci:])
	}
	// The empty lines at the end are as many as the value's final line breaks say (with
	// "+"; none otherwise): the source's last line may lack its line break.
	for len(content) > 0 && content[len(content)-1] == "" {
		content = content[:len(content)-1]
	}
	if strings.Contains(header, "+") {
		breaks := len(n.Value) - len(strings.TrimRight(n.Value, "\n"))
		if len(content) > 0 {
			breaks--
		}
		for ; breaks > 0; breaks-- {
			content = append(content, "")
		}
	}
	return pre + header, content, max(n.Line, e.last)
}

// blockHeader returns the block scalar indicator of n as written: "|", ">-", "|2+"...
func blockHeader(src []string, n *yaml.Node) string {
	if n.Line < 1 || n.Line > len(src) {
		return ""
	}
	line := src[n.Line-1]
	start := min(max(n.Column-1, 0), len(line))
	i := strings.IndexAny(line[start:], "|>")
	if i < 0 {
		return ""
	}
	h := line[start+i:]
	j := 1
	for j < len(h) && strings.IndexByte("+-0123456789", h[j]) >= 0 {
		j++
	}
	return h[:j]
}

// blockExtent finds the content lines of the block scalar n, whose parent block is at source
// column parent (-1 at the root), as yaml.v3 (libyaml) does: the content is indented by the
// indentation indicator past the parent, or else as its first non-empty line (and at least
// one past the parent); it goes on while lines are empty or indented at least as much.
func blockExtent(src []string, n *yaml.Node, parent int) extent {
	h := n.Line
	header := blockHeader(src, n)
	if header == "" {
		return extent{}
	}
	keep := strings.Contains(header, "+")
	e := extent{first: h + 1, last: h, ok: true}
	if i := strings.IndexAny(header, "123456789"); i >= 0 {
		e.ci = max(parent, 0) + int(header[i]-'0')
		if parent < 0 {
			e.ci = int(header[i] - '0')
		}
	} else {
		e.ci = max(parent+1, 1)
		for i := h + 1; i <= len(src); i++ {
			l := src[i-1]
			e.ci = max(e.ci, leadingSpaces(l))
			if strings.Trim(l, " ") != "" {
				break
			}
		}
	}
	for i := h + 1; i <= len(src); i++ {
		l := src[i-1]
		switch {
		case emptyIn(l, e.ci):
			if keep {
				e.last = i
			}
			continue
		case strings.TrimSpace(l) != "" && leadingSpaces(l) < e.ci:
			return e
		}
		e.last = i // text, or spaces past the indentation, which are text too
	}
	return e
}

// emptyIn reports whether l is an empty line of a block scalar indented by ci: spaces up to
// the indentation, no more.
func emptyIn(l string, ci int) bool { return strings.Trim(l, " ") == "" && len(l) <= ci }

func leadingSpaces(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// scalarEnd returns the last source line of a plain or quoted scalar.
func (p *printer) scalarEnd(n *yaml.Node) int {
	if n.Line < 1 || n.Line > len(p.src) {
		return n.Line
	}
	line := p.src[n.Line-1]
	col := min(max(n.Column-1, 0), len(line))
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		l, _ := p.quotedEnd(n.Line, col, '"')
		return l
	case n.Style&yaml.SingleQuotedStyle != 0:
		l, _ := p.quotedEnd(n.Line, col, '\'')
		return l
	case strings.Contains(line[col:], n.Value):
		return n.Line
	}
	// A plain scalar over several lines: follow its words.
	l, c := n.Line, col
	for _, w := range strings.Fields(n.Value) {
		for l <= len(p.src) {
			s := p.src[l-1]
			if i := strings.Index(s[min(c, len(s)):], w); i >= 0 {
				c = min(c, len(s)) + i + len(w)
				break
			}
			l, c = l+1, 0
		}
	}
	return min(l, len(p.src))
}

// quotedEnd returns the line and column of the closing quote q of the scalar that starts at
// line, col.
func (p *printer) quotedEnd(line, col int, q byte) (int, int) {
	open := false
	for l := line; l <= len(p.src); l++ {
		s, i := p.src[l-1], 0
		if l == line {
			i = col
		}
		if !open {
			j := strings.IndexByte(s[i:], q)
			if j < 0 {
				return line, -1
			}
			i, open = i+j+1, true
		}
		for ; i < len(s); i++ {
			switch {
			case q == '"' && s[i] == '\\':
				i++
			case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
				i++
			case s[i] == q:
				return l, i
			}
		}
	}
	return line, -1
}
