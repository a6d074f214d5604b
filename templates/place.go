package templates

import (
	"encoding/json"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Placing values. A value is never read back from the rendered text where that would change
// it (YAML decodes escapes in double quotes, reads `|` as a block scalar, `null` as null): the
// template is rendered with a placeholder in place of each such value, the placeholders'
// text is parsed, and the value's characters are put into the scalars that hold them. When
// the template transforms a value (a filter, a comparison), the placeholder cannot stand for
// it; that value is placed as the text the template makes of it, and YAML reads that.

// holeMark starts every placeholder; placeholders end with '_' so that none is a prefix of
// another (sluice_param_1_ of sluice_param_11_).
const holeMark = "sluice_param_"

// emptyHole is the placeholder of an empty text value: false in {% if %}, as "" is, but
// rendered as a token that can be found.
type emptyHole bool

func (emptyHole) String() string { return emptyHoleText }

const emptyHoleText = holeMark + "empty_"

// text reports whether the binding is a declared text or password parameter: its value
// arrives as exactly its characters, a string wherever it is put.
func (b *binding) text() bool {
	return b.spec != nil && (b.spec.Type == TypeText || b.spec.Type == TypePassword)
}

// secret reports whether the binding's value must never be shown.
func (b *binding) secret() bool { return b.display != b.value }

// needsHole reports whether the value must be placed through a placeholder: it could change
// the YAML structure, YAML would read it as something else, or it is secret (so that where
// it lands is known).
func (b *binding) needsHole() bool {
	if b.value == "" {
		return b.text()
	}
	if b.secret() || !safeValue(b.value) {
		return true
	}
	return b.text() && plainTag(b.value) != "!!str"
}

// holeValue is what the template sees in place of the binding's value.
func (b *binding) holeValue() any {
	if b.value == "" {
		return emptyHole(false)
	}
	return b.hole
}

// holeText is the placeholder's text in the rendered output.
func (b *binding) holeText() string {
	if b.value == "" {
		return emptyHoleText
	}
	return b.hole
}

// plainTag is the tag YAML gives v as a plain scalar, or !!str when v is not read back as
// itself.
func plainTag(v string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(v), &doc) != nil || len(doc.Content) != 1 {
		return "!!str"
	}
	n := doc.Content[0]
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Value != v {
		return "!!str"
	}
	return n.ShortTag()
}

// fill replaces, in the strings given, the placeholders of the bindings in holes.
func (r *renderer) fill(s string, holes map[string]bool, display bool) string {
	if !strings.Contains(s, holeMark) {
		return s
	}
	var pairs []string
	for _, b := range r.binds {
		if !b.unsafe || !holes[b.name] {
			continue
		}
		v := b.value
		if display {
			v = b.display
		}
		pairs = append(pairs, b.holeText(), v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// place puts the values of the placed bindings into the scalars of doc that hold their
// placeholders, and records the scalars that hold a secret with how they are shown.
func (r *renderer) place(n *yaml.Node, placed map[string]bool, res *Result) {
	if n.Kind == yaml.ScalarNode {
		if strings.Contains(n.Value, holeMark) {
			r.placeScalar(n, placed, res)
		}
		return
	}
	for _, c := range n.Content {
		r.place(c, placed, res)
	}
	if n.Kind == yaml.MappingNode {
		r.checkKeys(n)
	}
}

func (r *renderer) placeScalar(n *yaml.Node, placed map[string]bool, res *Result) {
	var in []*binding
	for _, b := range r.binds {
		if b.unsafe && placed[b.name] && strings.Contains(n.Value, b.holeText()) {
			in = append(in, b)
		}
	}
	if len(in) == 0 {
		return
	}
	shown := r.fill(n.Value, placed, true)
	tag := "!!str"
	if b := in[0]; len(in) == 1 && n.Style == 0 && n.Value == b.holeText() {
		// A whole plain value: a JSON object or list becomes a flow mapping or list, as in
		// Dataflow; a typed (or undeclared) value gets its YAML type.
		if !b.secret() && isJSONCollection(b.value) {
			if spliceJSON(n, b.value) {
				return
			}
		}
		if !b.text() {
			tag = plainTag(b.value)
		}
	}
	value := r.fill(n.Value, placed, false)
	if _, whole := res.secretNodes[n]; !whole && secretNames(in) != "" {
		if res.secretNodes == nil {
			res.secretNodes = map[*yaml.Node]string{}
		}
		res.secretNodes[n] = shown
	}
	if r.placedIn == nil {
		r.placedIn = map[*yaml.Node][]*binding{}
	}
	r.placedIn[n] = in
	n.Value, n.Tag = value, tag
}

func isJSONCollection(v string) bool {
	t := strings.TrimSpace(v)
	return (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t))
}

// spliceJSON replaces n by the YAML reading of a JSON object or list, at n's position.
func spliceJSON(n *yaml.Node, v string) bool {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(v), &doc) != nil || len(doc.Content) != 1 {
		return false
	}
	line, col := n.Line, n.Column
	*n = *doc.Content[0]
	var at func(m *yaml.Node)
	at = func(m *yaml.Node) {
		m.Line, m.Column = line, col
		for _, c := range m.Content {
			at(c)
		}
	}
	at(n)
	return true
}

// checkKeys reports a mapping key given by a value that repeats another key. The message
// names the parameters; it quotes the key only when no secret is in it.
func (r *renderer) checkKeys(m *yaml.Node) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		first := seen[k.Value]
		if first == nil {
			seen[k.Value] = k
			continue
		}
		in := append(append([]*binding(nil), r.placedIn[first]...), r.placedIn[k]...)
		if len(in) == 0 {
			continue // the template's own keys: not a value's doing
		}
		what := "it repeats key " + strconv.Quote(k.Value)
		if secretNames(in) != "" {
			what = "it repeats a key"
		}
		r.injection(bindingNames(in), &shapeDiff{node: k, what: what, lines: r.pLines})
	}
}

// secretNames returns the names of the secret bindings among in, or "".
func secretNames(in []*binding) string {
	var names []string
	for _, b := range in {
		if b.secret() {
			names = append(names, b.name)
		}
	}
	return strings.Join(names, ", ")
}

// markTransformed records the scalars of doc that hold a secret the template transformed (so
// it is there as real text, not as its placeholder): those whose counterpart in shape, the
// placeholder render, holds the secret's placeholder (in any case) more often than they do.
// They are shown as the secrets' masks, whole.
func (r *renderer) markTransformed(shape, doc *yaml.Node, res *Result) {
	if shape.Kind != doc.Kind {
		return
	}
	if shape.Kind == yaml.ScalarNode {
		var shown []string
		lower := strings.ToLower(shape.Value)
		for _, b := range r.binds {
			if b.unsafe && b.secret() && strings.Count(lower, b.holeText()) > strings.Count(doc.Value, b.holeText()) {
				shown = append(shown, b.display)
			}
		}
		if len(shown) > 0 {
			if res.secretNodes == nil {
				res.secretNodes = map[*yaml.Node]string{}
			}
			res.secretNodes[doc] = strings.Join(shown, " ")
		}
		return
	}
	for i := range shape.Content {
		if i < len(doc.Content) {
			r.markTransformed(shape.Content[i], doc.Content[i], res)
		}
	}
}
