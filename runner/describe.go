package runner

import (
	"fmt"
	"strings"
)

// DOT renders the plan as a Graphviz digraph.
func (p *Plan) DOT() string {
	var b strings.Builder
	b.WriteString("digraph pipeline {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n")
	p.walkScopes(func(depth, id int, c *composite) {
		fmt.Fprintf(&b, "%ssubgraph cluster_%d {\n%s  label=%q;\n", indent(depth), id, indent(depth), c.node.Name)
	}, func(depth, i int) {
		n := p.Nodes[i]
		label := n.Name
		if n.Name != n.Type {
			label += "\n" + n.Type
		}
		fmt.Fprintf(&b, "%sn%d [label=%q];\n", indent(depth), i, label)
	}, func(depth int) { fmt.Fprintf(&b, "%s}\n", indent(depth)) })
	p.edges(func(from, to int, label string, errs bool) {
		attrs := ""
		if label != "" {
			attrs = fmt.Sprintf(" [label=%q", label)
			if errs {
				attrs += ", style=dashed, color=red"
			}
			attrs += "]"
		}
		fmt.Fprintf(&b, "  n%d -> n%d%s;\n", from, to, attrs)
	})
	b.WriteString("}\n")
	return b.String()
}

// Mermaid renders the plan as a Mermaid flowchart.
func (p *Plan) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	p.walkScopes(func(depth, id int, c *composite) {
		fmt.Fprintf(&b, "%ssubgraph c%d[\"%s\"]\n", indent(depth), id, mermaidEscape(c.node.Name))
	}, func(depth, i int) {
		n := p.Nodes[i]
		label := mermaidEscape(n.Name)
		if n.Name != n.Type {
			label += "<br/><i>" + n.Type + "</i>"
		}
		fmt.Fprintf(&b, "%sn%d[\"%s\"]\n", indent(depth), i, label)
	}, func(depth int) { fmt.Fprintf(&b, "%send\n", indent(depth)) })
	p.edges(func(from, to int, label string, errs bool) {
		arrow := "-->"
		if errs {
			arrow = "-.->"
		}
		if label != "" {
			fmt.Fprintf(&b, "  n%d %s|%s| n%d\n", from, arrow, mermaidEscape(label), to)
		} else {
			fmt.Fprintf(&b, "  n%d %s n%d\n", from, arrow, to)
		}
	})
	return b.String()
}

func mermaidEscape(s string) string { return strings.ReplaceAll(s, "\"", "#quot;") }

func indent(depth int) string { return strings.Repeat("  ", depth+1) }

// walkScopes calls node for every node of the plan, inside open and close calls for the
// nested chains and composites that hold it (docs/structure.md), so that the graph draws
// them as boxes around their transforms. Nodes and composites come in plan order.
func (p *Plan) walkScopes(open func(depth, id int, c *composite), node func(depth, i int), close func(depth int)) {
	nodes := map[*scope][]int{}
	children := map[*scope][]*scope{}
	var top *scope
	seen := map[*scope]bool{}
	for i, n := range p.Nodes {
		s := n.scope
		nodes[s] = append(nodes[s], i)
		for ; s != nil && !seen[s]; s = s.parent {
			seen[s] = true
			if s.parent != nil {
				children[s.parent] = append(children[s.parent], s)
			} else {
				top = s
			}
		}
	}
	id := 0
	var walk func(s *scope, depth int)
	walk = func(s *scope, depth int) {
		for _, i := range nodes[s] {
			node(depth, i)
		}
		for _, c := range children[s] {
			open(depth, id, c.comp)
			id++
			walk(c, depth+1)
			close(depth)
		}
	}
	walk(top, 0)
}

// edges calls fn for every edge, labelled with the tag when the producer has several outputs.
func (p *Plan) edges(fn func(from, to int, label string, errs bool)) {
	index := map[*Node]int{}
	for i, n := range p.Nodes {
		index[n] = i
	}
	for i, n := range p.Nodes {
		for _, e := range n.Inputs {
			label := ""
			out, _ := e.From.Output(e.Tag)
			if len(e.From.Outputs) > 1 {
				label = e.Tag
			}
			fn(index[e.From], i, label, out.Errors)
		}
	}
}
