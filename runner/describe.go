package runner

import (
	"fmt"
	"strings"
)

// DOT renders the plan as a Graphviz digraph.
func (p *Plan) DOT() string {
	var b strings.Builder
	b.WriteString("digraph pipeline {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n")
	for i, n := range p.Nodes {
		label := n.Name
		if n.Name != n.Type {
			label += "\n" + n.Type
		}
		fmt.Fprintf(&b, "  n%d [label=%q];\n", i, label)
	}
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
	for i, n := range p.Nodes {
		label := mermaidEscape(n.Name)
		if n.Name != n.Type {
			label += "<br/><i>" + n.Type + "</i>"
		}
		fmt.Fprintf(&b, "  n%d[\"%s\"]\n", i, label)
	}
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
