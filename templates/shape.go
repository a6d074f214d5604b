package templates

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// shapeDiff is where two YAML trees differ in structure: at node (of the placeholder render).
type shapeDiff struct {
	node  *yaml.Node
	what  string
	key   string  // the key added or removed, quoted after what
	line  int     // the template line, when node is nil
	lines lineMap // the line map of node's text, when it is not the placeholder render's
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
			return nil // placed through its placeholder, or what the template made of it
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
				return &shapeDiff{node: s, what: "it adds key", key: k}
			}
		}
		for _, k := range sk {
			if !contains(vk, k) && r.hole(k) == nil {
				return &shapeDiff{node: s, what: "it removes key", key: k}
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
func (r *renderer) blame(shape, doc *yaml.Node, holes, placed map[string]bool, parseErr error, lines lineMap) {
	found := false
	shapeText, _, _ := r.render(holes)
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
		if placed[b.name] {
			// Where it is printed as it is, it is placed: only the rest must keep the shape.
			if spliced, sl, ok := r.splice(shapeText, text, map[string]bool{b.name: true}, oneLines); ok {
				text, oneLines = spliced, sl
			}
		}
		var d *shapeDiff
		if oneDoc, err := parseYAML(text); err != nil {
			msg, line := yamlMessage(err)
			d = &shapeDiff{what: "it breaks the YAML: " + msg, line: oneLines.at(line)}
			if b.secret() {
				d.what = "it breaks the YAML" // the message could quote the value
			}
		} else {
			d = r.diff(shape, oneDoc)
		}
		if d != nil {
			if b.secret() {
				d.what, d.key = d.secretWhat(), ""
			}
			r.injection(b.name, d)
			found = true
		}
	}
	if found {
		return
	}
	var names []*binding
	for _, b := range r.binds {
		if b.unsafe {
			names = append(names, b)
		}
	}
	if parseErr != nil {
		if secretNames(names) != "" {
			r.diags.Add(diag.Pos{File: r.path, Line: 1, Col: 1}, "invalid YAML after rendering the template with the values of %s (the message is not shown: it could quote a secret)", bindingNames(names))
			return
		}
		r.yamlError(parseErr, lines)
		return
	}
	d := r.diff(shape, doc)
	if d == nil {
		d = &shapeDiff{node: shape, what: "together they change it"}
	}
	if secretNames(names) != "" {
		d.what, d.key = d.secretWhat(), ""
	}
	r.injection(bindingNames(names), d)
}

// bindingNames returns the names of bs, joined with commas.
func bindingNames(bs []*binding) string {
	var names []string
	for _, b := range bs {
		names = append(names, b.name)
	}
	return strings.Join(names, ", ")
}

// text describes the change.
func (d *shapeDiff) text() string {
	if d.key != "" {
		return d.what + " " + strconv.Quote(d.key)
	}
	return d.what
}

// secretWhat describes the change without any text of the value: for a secret.
func (d *shapeDiff) secretWhat() string {
	switch {
	case strings.HasPrefix(d.what, "it adds key"):
		return "it adds a key"
	case strings.HasPrefix(d.what, "it removes key"):
		return "it removes a key"
	case strings.HasPrefix(d.what, "it breaks the YAML"):
		return "it breaks the YAML"
	}
	return d.what
}

// injection reports that the value of parameter name changes the pipeline's structure.
func (r *renderer) injection(name string, d *shapeDiff) {
	line := max(d.line, 1)
	if d.node != nil && d.node.Line > 0 {
		lines := r.sLines
		if d.lines != nil {
			lines = d.lines
		}
		line = lines.at(d.node.Line)
	}
	col := 1
	if d.node != nil && d.node.Kind != yaml.DocumentNode {
		col = d.node.Column
	}
	r.diags.Add(diag.Pos{File: r.path, Line: line, Col: col},
		"the value of parameter %q would change the pipeline's structure (%s)", name, d.text()).
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
// optional parameters removed; and the text before that removal (the spec hash's). When the
// masks do not render, the document is shown, encoded again, with its secrets masked.
func (r *renderer) display(plain *template, res *Result, doc *yaml.Node) (string, string) {
	vars := r.values(nil)
	for _, b := range r.binds {
		vars[b.name] = b.display
	}
	text, err := plain.render(vars)
	if err != nil {
		return r.encode(res.displayDoc(doc), string(res.Source)), ""
	}
	shown, err := parseYAML(text)
	if err != nil {
		return r.encode(res.displayDoc(doc), string(res.Source)), text
	}
	removed := prune(shown)
	if want := res.displayDoc(doc); !sameDoc(shown, want) {
		// YAML would read the text otherwise than the values were placed (`"a\x41b"`, `|`):
		// show the document itself.
		return r.encode(want, text), text
	}
	if len(removed) == 0 {
		return text, text
	}
	if out, ok := dropLines(text, removed); ok {
		return out, text
	}
	return r.encode(shown, text), text
}

// sameDoc reports whether two documents hold the same values: kinds, scalars and their tags.
func sameDoc(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && (a.Value != b.Value || a.ShortTag() != b.ShortTag()) {
		return false
	}
	for i := range a.Content {
		if !sameDoc(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// encode returns doc as YAML text, or fallback when it cannot be encoded and holds no secret.
func (r *renderer) encode(doc *yaml.Node, fallback string) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(doc) != nil {
		for _, x := range r.binds {
			if x.secret() {
				return "# the rendered pipeline cannot be shown without its secrets\n"
			}
		}
		return fallback
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
