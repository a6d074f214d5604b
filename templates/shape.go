package templates

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// shapeDiff is where two YAML trees differ in structure: at node (of the placeholder render).
type shapeDiff struct {
	node *yaml.Node
	what string
	line int // the template line, when node is nil
}

// sameShape reports whether doc (rendered with the real values) has the structure of shape
// (rendered with placeholders).
func (r *renderer) sameShape(shape, doc *yaml.Node) bool {
	return r.diff(shape, doc) == nil
}

// diff compares the structure of s (placeholders) and v (values): the same mappings with the
// same keys, the same sequences with as many items. A scalar that is exactly one placeholder
// may become a flow mapping or list: a JSON value gets its YAML type, as in Dataflow.
func (r *renderer) diff(s, v *yaml.Node) *shapeDiff {
	if s.Kind == yaml.ScalarNode {
		b := r.hole(s.Value)
		switch {
		case b == nil && v.Kind == yaml.ScalarNode:
			return nil
		case b == nil:
			return &shapeDiff{node: s, what: "it turns a value into a " + kindName(v)}
		case v.Kind == yaml.ScalarNode:
			if v.Style == 0 && v.Value != strings.TrimSpace(b.value) {
				return &shapeDiff{node: s, what: "YAML would read a different value: a ' #' starts a comment and line breaks fold"}
			}
			return nil
		case v.Style&yaml.FlowStyle != 0 && json.Valid([]byte(b.value)):
			return nil // a JSON value gets its YAML type
		}
		return &shapeDiff{node: s, what: "it turns a value into a " + kindName(v)}
	}
	if s.Kind != v.Kind {
		return &shapeDiff{node: s, what: "it turns a " + kindName(s) + " into a " + kindName(v)}
	}
	switch s.Kind {
	case yaml.MappingNode:
		sk, vk := keys(s), keys(v)
		for _, k := range vk {
			if !contains(sk, k) && !r.holeIn(sk) {
				return &shapeDiff{node: s, what: fmt.Sprintf("it adds key %q", k)}
			}
		}
		for _, k := range sk {
			if !contains(vk, k) && r.hole(k) == nil {
				return &shapeDiff{node: s, what: fmt.Sprintf("it removes key %q", k)}
			}
		}
		if len(sk) != len(vk) {
			return &shapeDiff{node: s, what: fmt.Sprintf("it makes %d keys of %d", len(vk), len(sk))}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		if n, m := len(s.Content), len(v.Content); n != m {
			verb := "adds"
			if m < n {
				verb = "removes"
			}
			return &shapeDiff{node: s, what: fmt.Sprintf("it %s %d list %s", verb, abs(m-n), plural(abs(m-n), "item"))}
		}
	}
	for i := range s.Content {
		if d := r.diff(s.Content[i], v.Content[i]); d != nil {
			return d
		}
	}
	return nil
}

// hole returns the binding whose placeholder s is, or nil.
func (r *renderer) hole(s string) *binding {
	for _, b := range r.binds {
		if b.unsafe && s == b.hole {
			return b
		}
	}
	return nil
}

// holeIn reports whether a key of a mapping holds a placeholder (a key given by a value).
func (r *renderer) holeIn(keys []string) bool {
	for _, k := range keys {
		for _, b := range r.binds {
			if b.unsafe && strings.Contains(k, b.hole) {
				return true
			}
		}
	}
	return false
}

func keys(m *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

func abs(n int) int { return max(n, -n) }

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// blame finds the values that change the structure: rendered one at a time, each with the
// others as placeholders. parseErr is the real render's YAML error, if that was the problem.
func (r *renderer) blame(shape, doc *yaml.Node, holes map[string]bool, parseErr error, lines lineMap) {
	found := false
	for _, b := range r.binds {
		if !b.unsafe {
			continue
		}
		one := make(map[string]bool, len(holes))
		for k := range holes {
			one[k] = k != b.name
		}
		text, oneLines, ok := r.render(one)
		if !ok {
			return
		}
		var d *shapeDiff
		if oneDoc, err := parseYAML(text); err != nil {
			msg, line := yamlMessage(err)
			d = &shapeDiff{what: "it breaks the YAML: " + msg, line: oneLines.at(line)}
		} else {
			d = r.diff(shape, oneDoc)
		}
		if d != nil {
			r.injection(b.name, d)
			found = true
		}
	}
	if found {
		return
	}
	if parseErr != nil {
		r.yamlError(parseErr, lines)
		return
	}
	var names []string
	for _, b := range r.binds {
		if b.unsafe {
			names = append(names, b.name)
		}
	}
	d := r.diff(shape, doc)
	if d == nil {
		d = &shapeDiff{node: shape, what: "together they change it"}
	}
	r.injection(strings.Join(names, ", "), d)
}

// injection reports that the value of parameter name changes the pipeline's structure.
func (r *renderer) injection(name string, d *shapeDiff) {
	line := max(d.line, 1)
	if d.node != nil && d.node.Line > 0 {
		line = r.sLines.at(d.node.Line)
	}
	col := 1
	if d.node != nil && d.node.Kind != yaml.DocumentNode {
		col = d.node.Column
	}
	r.diags.Add(diag.Pos{File: r.path, Line: line, Col: col},
		"the value of parameter %q would change the pipeline's structure (%s)", name, d.what).
		Detail = "a parameter's value can only set a value: it cannot add or remove keys, transforms or list items. Quote it in the template, or give it without newlines, ': ', '- ', '#' or braces"
}

// removedEntry is a mapping entry (by its key) or a list item that prune removed.
type removedEntry struct {
	node *yaml.Node
	key  bool
}

// prune removes every mapping entry and list item whose value is exactly an unset parameter's
// marker, as Dataflow does, and returns them.
func prune(n *yaml.Node) []removedEntry {
	var removed []removedEntry
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isUnsetMarker(n.Content[i+1]) {
				removed = append(removed, removedEntry{n.Content[i], true})
				continue
			}
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
	case yaml.SequenceNode:
		kept := n.Content[:0:0]
		for _, c := range n.Content {
			if isUnsetMarker(c) {
				removed = append(removed, removedEntry{c, false})
				continue
			}
			kept = append(kept, c)
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		removed = append(removed, prune(c)...)
	}
	return removed
}

func isUnsetMarker(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Value == unsetMarker }

// checkUnset reports an unset optional parameter used anywhere but as a whole value.
func (r *renderer) checkUnset(doc *yaml.Node, res *Result) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			if strings.Contains(n.Value, unsetMarker) {
				line := res.Line(n.Line)
				name := r.unsetOn(line)
				r.diags.Add(diag.Pos{File: r.path, Line: line, Col: n.Column},
					"optional parameter %q is not given and has no default, but the template uses it inside a value", name).
					Detail = fmt.Sprintf("give it with -p %s=VALUE, or write {{ %s | default('...') }} in the template", name, name)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
}

// display renders the template for showing: secret values replaced by their masks, unset
// optional parameters removed. It falls back to the real text when the masks do not render.
func (r *renderer) display(plain *template, real string, doc *yaml.Node) string {
	vars := r.values(nil)
	for _, b := range r.binds {
		vars[b.name] = b.display
	}
	text, err := plain.render(vars)
	if err != nil {
		text = real
	}
	shown, err := parseYAML(text)
	if err != nil {
		return real
	}
	removed := prune(shown)
	if len(removed) == 0 {
		return text
	}
	if out, ok := dropLines(text, removed); ok {
		return out
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(shown) != nil {
		return text
	}
	return b.String()
}

// dropLines removes the lines of removed block entries (`key: marker` or `- marker` alone on
// their line) from text. It fails for entries that share their line with other content.
func dropLines(text string, removed []removedEntry) (string, bool) {
	lines := strings.Split(text, "\n")
	drop := map[int]bool{}
	for _, e := range removed {
		n := e.node
		if n.Line < 1 || n.Line > len(lines) || n.Column-1 > len(lines[n.Line-1]) {
			return "", false
		}
		l := lines[n.Line-1]
		before := strings.TrimLeft(l[:n.Column-1], " ")
		alone := (e.key && before == "") || (!e.key && before == "- ")
		if !alone || !strings.HasSuffix(strings.TrimRight(l, " "), unsetMarker) {
			return "", false
		}
		drop[n.Line] = true
	}
	var out []string
	for i, l := range lines {
		if !drop[i+1] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n"), true
}

// unsetOn returns the unset parameter that template line n names (the first, by position).
func (r *renderer) unsetOn(n int) string {
	name, at := "", -1
	if n < 1 || n > len(r.marked.lines) {
		return name
	}
	l := r.marked.lines[n-1]
	for k, v := range r.vars {
		if _, ok := v.(unset); !ok {
			continue
		}
		if i := wordIndex(l, k); i >= 0 && (at < 0 || i < at) {
			name, at = k, i
		}
	}
	return name
}
