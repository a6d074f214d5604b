package yamlfmt

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/internal/diag"
)

// indent is the number of spaces of one indentation level.
const indent = 2

// outLine is one line of the output, with the source lines it comes from, so that blank lines
// of the source can be restored between them (yaml.v3 keeps no blank lines).
type outLine struct {
	text      string
	srcStart  int  // first source line (1-based); 0 when the line has no source line
	srcEnd    int  // last source line it covers, e.g. the end of a multi-line scalar
	opens     bool // "key:" or "- &anchor" whose value follows: no blank line after it
	verbatim  bool // block scalar content: printed as it is, never preceded by a blank line
	commented bool // it ends with a comment
}

// level is an open block collection: the source column of its entries and their output
// indentation. A full-line comment is printed at the level whose source column it had.
type level struct {
	srcCol int
	ind    int
}

// printer prints yaml.v3 documents in the canonical style. It prints the nodes; comments are
// placed by where they are in the source (comments.go), since yaml.v3 attaches a comment after
// nested blocks, or next to an empty value, to nodes that do not say where it was.
type printer struct {
	file    string
	src     []string // the source lines, without the final empty one
	out     []outLine
	pending string // "- " indicators that the next content line starts with
	pendInd int    // the indentation of the first pending indicator
	levels  []level
	recent  []level      // the levels that were open at the last content line
	text    map[int]bool // source lines inside a scalar (block scalar content, quoted lines)
	full    []comment    // full-line comments not printed yet, in source order
	// trailing holds the comments at the end of a content line, by source line.
	trailing      map[int]string
	trailingLines []int  // the lines of trailing, in order
	carry         string // a trailing comment for the next content line
	markers       []int  // the source lines of "---" markers
	blocks        map[*yaml.Node]extent
	errs          diag.List
}

func newPrinter(file string, src []byte) *printer {
	lines := strings.Split(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return &printer{file: file, src: lines, text: map[int]bool{}, trailing: map[int]string{},
		blocks: map[*yaml.Node]extent{}}
}

func spaces(n int) string { return strings.Repeat(" ", max(n, 0)) }

func (p *printer) errorAt(n *yaml.Node, format string, args ...any) {
	p.errs.Add(diag.At(p.file, n), format, args...)
}

// emit adds a content line at indentation ind, after the pending "- " indicators if any, and
// before it the comments of the source lines before start.
func (p *printer) emit(ind int, text string, start, end int) *outLine {
	if start > 0 {
		p.flush(start)
	}
	prefix := spaces(ind)
	if p.pending != "" {
		prefix = spaces(p.pendInd) + p.pending
		p.pending = ""
	}
	line := strings.TrimRight(prefix+text, " ")
	commented := p.carry != ""
	if commented {
		line += " " + p.carry
		p.carry = ""
	}
	p.out = append(p.out, outLine{text: line, srcStart: start, srcEnd: max(start, end), commented: commented})
	p.recent = append(p.recent[:0], p.levels...)
	return &p.out[len(p.out)-1]
}

// pushDash adds a "- " indicator for a sequence item at indentation ind.
func (p *printer) pushDash(ind int) {
	if p.pending == "" {
		p.pendInd = ind
	}
	p.pending += "- "
}

// push opens a level; the returned function closes it.
func (p *printer) push(srcCol, ind int) func() {
	p.levels = append(p.levels, level{srcCol, ind})
	return func() { p.levels = p.levels[:len(p.levels)-1] }
}

// document prints one document; marker is the source line of its "---", -1 for none.
func (p *printer) document(doc *yaml.Node, marker int) {
	// A document whose root is an empty null ("---" alone) keeps its marker.
	empty := len(doc.Content) == 0 || isEmptyNull(doc.Content[0])
	if marker >= 0 || empty {
		p.emit(0, "---", max(marker, 0), max(marker, 0))
	}
	if empty {
		return
	}
	root := doc.Content[0]
	switch {
	case isBlock(root) && props(root) == "":
		p.block(root, 0)
	case isBlock(root):
		p.emit(0, props(root), root.Line, root.Line).opens = true
		p.block(root, 0)
	default:
		p.inline(0, "", root, root.Line, 0)
	}
}

// block prints a block mapping or sequence whose entries are at indentation ind.
func (p *printer) block(n *yaml.Node, ind int) {
	if n.Kind == yaml.MappingNode {
		p.mapping(n, ind)
	} else {
		p.sequence(n, ind)
	}
}

// mapping prints the entries of a block mapping at indentation ind.
func (p *printer) mapping(n *yaml.Node, ind int) {
	defer p.push(mapCol(n), ind)()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := p.key(k)
		switch {
		case !isBlock(v) && !isEmptyNull(v) && v.Line > k.Line && (p.commentBetween(k.Line, v.Line) || p.trailing[k.Line] != ""):
			// Comments between the key and its value: the value stays on its own line.
			p.emit(ind, key+":", k.Line, k.Line).opens = true
			pop := p.push(v.Column-1, ind+indent)
			p.inline(ind+indent, "", v, v.Line, ind)
			pop()
		case !isBlock(v):
			p.inline(ind, key+":", v, k.Line, ind)
		default:
			head := key + ":"
			if pr := props(v); pr != "" {
				head += " " + pr
			}
			p.emit(ind, head, k.Line, k.Line).opens = true
			p.block(v, ind+indent)
		}
	}
}

// sequence prints the items of a block sequence, their "- " at indentation ind.
func (p *printer) sequence(n *yaml.Node, ind int) {
	defer p.push(p.dashCol(n), ind)()
	for _, it := range n.Content {
		p.pushDash(ind)
		switch {
		case !isBlock(it):
			p.inline(ind+indent, "", it, it.Line, ind)
		case props(it) != "":
			p.emit(ind+indent, props(it), it.Line, it.Line).opens = true
			p.block(it, ind+indent)
		default:
			p.block(it, ind+indent)
		}
	}
}

// mapCol returns the source column of a block mapping's keys: the node's own, unless it
// starts with an anchor or tag, then its first key's.
func mapCol(n *yaml.Node) int {
	if n.Anchor == "" && n.Style&yaml.TaggedStyle == 0 {
		return n.Column - 1
	}
	return n.Content[0].Column - 1
}

// dashCol returns the source column of the "- " of a block sequence's items. The node's own
// column is that of its anchor or tag, when it has one.
func (p *printer) dashCol(n *yaml.Node) int {
	if n.Anchor == "" && n.Style&yaml.TaggedStyle == 0 {
		return n.Column - 1
	}
	for l := n.Line + 1; l <= len(p.src); l++ {
		if t := strings.TrimLeft(p.src[l-1], " "); strings.HasPrefix(t, "-") {
			return len(p.src[l-1]) - len(t)
		}
	}
	return n.Column - 1
}

// inline prints a value that stands on the line of its key or "- " (a scalar, an alias, a
// flow collection, a block scalar's header). prefix is "key:" or empty; parent is the
// indentation of the entry the value belongs to.
func (p *printer) inline(ind int, prefix string, v *yaml.Node, line, parent int) {
	text, content, end := p.value(v, parent)
	s := prefix
	if text != "" && s != "" {
		s += " "
	}
	p.emit(ind, s+text, line, end)
	for _, c := range content {
		p.out = append(p.out, outLine{text: c, verbatim: true})
	}
}

// value renders an inline value: its text, the content lines of a block scalar, and the last
// source line it covers.
func (p *printer) value(v *yaml.Node, parent int) (string, []string, int) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return p.blockScalar(v, parent)
	case v.Kind == yaml.ScalarNode:
		return p.scalar(v), nil, p.scalarEnd(v)
	default:
		return p.flow(v), nil, v.Line
	}
}

// key renders a mapping key.
func (p *printer) key(k *yaml.Node) string {
	switch k.Kind {
	case yaml.ScalarNode:
		if k.Value == "" && k.Style == 0 && k.Tag == "!!null" {
			return strings.TrimSpace(p.scalar(k) + " null") // an empty key ("? " alone)
		}
		return p.scalar(k)
	case yaml.AliasNode:
		return "*" + k.Value + " "
	}
	p.errorAt(k, "cannot format a complex mapping key (a collection as a key)")
	return "?"
}

// flow renders a scalar, an alias or a collection on one line, collections in flow style.
func (p *printer) flow(n *yaml.Node) string {
	pr := props(n)
	if pr != "" {
		pr += " "
	}
	switch n.Kind {
	case yaml.ScalarNode:
		s := p.scalar(n)
		if s == "" {
			s = "null" // an empty value inside a flow sequence would vanish
		}
		return s
	case yaml.AliasNode:
		return "*" + n.Value
	case yaml.SequenceNode:
		items := make([]string, len(n.Content))
		for i, c := range n.Content {
			items[i] = p.flow(c)
		}
		return pr + "[" + strings.Join(items, ", ") + "]"
	case yaml.MappingNode:
		var items []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := p.key(n.Content[i]), n.Content[i+1]
			if isEmptyNull(v) {
				items = append(items, k)
			} else {
				items = append(items, k+": "+p.flow(v))
			}
		}
		return pr + "{" + strings.Join(items, ", ") + "}"
	}
	return ""
}

// isBlock reports whether n is printed as a block collection: a non-empty mapping or sequence
// in block style, or in flow style over several lines.
func isBlock(n *yaml.Node) bool {
	if (n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode) || len(n.Content) == 0 {
		return false
	}
	if n.Style&yaml.FlowStyle == 0 {
		return true
	}
	return !oneLine(n, n.Line)
}

// oneLine reports whether n and everything in it is on line.
func oneLine(n *yaml.Node, line int) bool {
	if n.Line != line {
		return false
	}
	for _, c := range n.Content {
		if !oneLine(c, line) {
			return false
		}
	}
	return true
}

// props returns n's tag (when written) and anchor, as "!tag &anchor".
func props(n *yaml.Node) string {
	var parts []string
	if n.Style&yaml.TaggedStyle != 0 && n.Kind != yaml.ScalarNode {
		parts = append(parts, tagText(n.Tag))
	}
	if n.Anchor != "" {
		parts = append(parts, "&"+n.Anchor)
	}
	return strings.Join(parts, " ")
}

// tagText writes a tag: "!!str", "!local" or "!<verbatim>", with the characters that a tag
// cannot hold as written escaped as %XX (yaml.v3 gives them decoded).
func tagText(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "!!"); ok && rest != "" {
		return "!!" + escapeTag(rest, false)
	}
	if rest, ok := strings.CutPrefix(tag, "!"); ok {
		return "!" + escapeTag(rest, false)
	}
	return "!<" + escapeTag(tag, true) + ">"
}

func escapeTag(s string, verbatim bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-#;/?:@&=+$_.~*'()", c) >= 0 || verbatim && strings.IndexByte("!,[]", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isEmptyNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && n.Tag == "!!null" && n.Anchor == ""
}

// render joins the output lines, with one blank line wherever the source had one or more
// between the lines they come from, except right after a line that opens a block.
func (p *printer) render() []byte {
	if len(p.out) == 0 {
		return nil
	}
	var b strings.Builder
	prevEnd, opens := 0, false
	for i, l := range p.out {
		if i > 0 && !l.verbatim && !opens && l.srcStart > prevEnd && prevEnd > 0 && p.blankBetween(prevEnd, l.srcStart) {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
		prevEnd = max(prevEnd, l.srcEnd)
		if !l.verbatim {
			opens = l.opens
		}
	}
	return []byte(b.String())
}

// blankBetween reports whether a source line strictly between lines a and b is blank.
func (p *printer) blankBetween(a, b int) bool {
	for i := a + 1; i < b && i <= len(p.src); i++ {
		if strings.TrimSpace(p.src[i-1]) == "" {
			return true
		}
	}
	return false
}
