package runner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/transforms/window"
	"gopkg.in/yaml.v3"
)

// This file reads Beam's nested pipelines: a `type: chain` or `type: composite` transform
// inside transforms:, to any depth. They group transforms and are not run themselves: the
// plan holds their transforms, named "<composite>/<transform>", with edges straight to the
// transforms that produce what they read. A reference inside a composite resolves against its
// input keys first, then its own transforms; outside, a reference to the composite resolves
// to the inner output its output: names (docs/architecture.md, "Nested pipelines").

// scope is the pipeline or one nested chain or composite: where names resolve.
type scope struct {
	parent *scope
	comp   *composite // nil for the pipeline
	prefix string     // "" for the pipeline, "<qualified name>/" inside a composite
	chain  bool
	window *window.Spec // its windowing: key, decoded once
	// members are its transforms in file order, composites included (as their Node).
	members []*Node
	// last is its last transform before extra_transforms (a chain's output), or nil.
	last *Node
}

// composite is a nested chain or composite transform.
type composite struct {
	node  *Node  // its place in the enclosing scope: name, position, input references
	scope *scope // its transforms
	spec  compositeSpec
	// inKeys are its input keys in the order written ("input" for a plain input: value).
	inKeys []string
	// outputs are its output: references by output name; implicit: a chain without output:
	// gives its last transform's outputs.
	outKeys  []string
	outputs  map[string]ref
	implicit bool
	// in and out memoize the resolution of its inputs and outputs.
	in, out map[string]*resolution
}

// producer is what a reference names once composites are seen through: an output of a
// transform that runs.
type producer struct {
	node     *Node
	tag      string
	explicit bool
	at       *yaml.Node   // the reference that named the output, for messages
	window   *window.Spec // the windowing of a composite whose input the reference passed
}

// resolution is a memoized target: state 1 while it is being resolved (a cycle), 2 when done.
type resolution struct {
	t     producer
	ok    bool
	state int
}

// plainInput is the input key of an input: that is not a mapping, as Beam names it.
const plainInput = "input"

// addComposite reads a nested chain or composite at n, in scope s, and its transforms.
func (f *file) addComposite(s *scope, n *yaml.Node, role string, placed func(*Node)) *Node {
	var cs compositeSpec
	f.dec.Decode(n, &cs, "transform") // problems reported; what decoded is still read
	name := cs.Name
	if name == "" { // Beam's default name; a second unnamed one of the type is numbered
		name = s.freeName(defaultName(cs.Type))
	}
	node := &Node{Type: cs.Type, Name: s.prefix + name, Pos: f.dec.At(n), yaml: n, role: role, scope: s,
		spec: transformSpec{Type: cs.Type, Name: cs.Name, Input: cs.Input, Output: cs.Output, Windowing: cs.Windowing}}
	c := &composite{node: node, spec: cs, outputs: map[string]ref{}, in: map[string]*resolution{}, out: map[string]*resolution{}}
	node.comp = c
	c.scope = &scope{parent: s, comp: c, prefix: node.Name + "/", chain: cs.Type == "chain"}
	if cs.Windowing != nil {
		c.scope.window = window.Decode(f.dec, cs.Windowing)
	}
	if cs.Input != nil {
		node.refs = f.inputRefs(cs.Input)
		node.explicitInput = true
	}
	if !c.scope.chain && len(cs.ExtraTransforms) > 0 {
		f.dec.Errorf(f.dec.At(component.MappingValue(n, "extra_transforms")),
			"extra_transforms is only for chains; in a composite list them under transforms")
	}
	if len(cs.Transforms) == 0 && cs.Source == nil && cs.Sink == nil {
		f.dec.Errorf(node.Pos, "%s has no transforms", node.Describe()).
			Detail = "a nested " + cs.Type + " lists its transforms under transforms:"
	}
	f.readOutputs(c, component.MappingValue(n, "output"))
	s.members = append(s.members, node)
	f.composites = append(f.composites, c)
	placed(node)
	c.inKeys = inputKeys(node.refs)
	// Its transforms are read once its own inputs are known: a nested chain's first transform
	// takes them.
	f.collectScope(c.scope, cs.Source, cs.Transforms, cs.Sink, cs.ExtraTransforms)
	return node
}

// inputKeys returns the keys of n's input references in the order written.
func inputKeys(refs []ref) []string {
	var out []string
	for _, r := range refs {
		k := cmp.Or(r.key, plainInput)
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// chainInputs are the references a nested chain's first transform reads: each of the chain's
// input keys, resolved inside the chain.
func (c *composite) chainInputs() []ref {
	named := len(c.inKeys) > 1 || len(c.inKeys) == 1 && c.inKeys[0] != plainInput
	var out []ref
	for _, k := range c.inKeys {
		r := ref{text: k, node: cmp.Or(component.MappingValue(c.node.yaml, "input"), c.node.yaml)}
		if named {
			r.key = k
		}
		out = append(out, r)
	}
	return out
}

// readOutputs reads a composite's output: a reference (output name "output") or a mapping of
// names to references. A chain without one gives its last transform's outputs.
func (f *file) readOutputs(c *composite, n *yaml.Node) {
	switch {
	case n == nil:
		c.implicit = c.scope.chain
	case n.Kind == yaml.ScalarNode && n.Value != "":
		c.outKeys, c.outputs[plainOutput] = []string{plainOutput}, ref{text: n.Value, node: n, output: true}
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				f.dec.Errorf(f.dec.At(v), "output %q of %s must name one transform, e.g. %s: Filter", k.Value, c.node.Describe(), k.Value)
				continue
			}
			c.outKeys = append(c.outKeys, k.Value)
			c.outputs[k.Value] = ref{text: v.Value, node: v, output: true}
		}
	default:
		f.dec.Errorf(f.dec.At(n), "the output of %s must name a transform inside it, or map output names to them", c.node.Describe())
	}
}

// plainOutput is the output name of an output: that is not a mapping, as Beam names it.
const plainOutput = "output"

// describe names a scope in messages.
func (s *scope) describe() string {
	if s.comp == nil {
		return "the pipeline"
	}
	return s.comp.node.Describe()
}

// rootWindow is the windowing a transform without inputs takes in s: the innermost windowing:
// of s and the scopes around it, else the pipeline's.
func (s *scope) rootWindow() *window.Spec {
	for ; s != nil; s = s.parent {
		if s.window != nil {
			return s.window
		}
	}
	return nil
}

// freeName is the name of an unnamed member of s called base: base, or from the second one on
// base#2, base#3... in file order. A name keys a transform's state in checkpoints and its
// metrics: two unnamed Combines of one chain called alike shared one state snapshot, and
// /metrics failed on their duplicate series. Duplicate name: keys are reported where the
// file's names are checked.
func (s *scope) freeName(base string) string {
	taken := func(name string) bool {
		for _, m := range s.members {
			if m.Name == s.prefix+name {
				return true
			}
		}
		return false
	}
	name := base
	for k := 2; taken(name); k++ {
		name = fmt.Sprintf("%s#%d", base, k)
	}
	return name
}

// defaultName is the name Beam gives an unnamed nested chain or composite.
func defaultName(typ string) string {
	if typ == "chain" {
		return "Chain"
	}
	return "Composite"
}

// lookup returns the members of s a name refers to: by name: (an unnamed chain or composite
// by Beam's default name), else by type.
func (s *scope) lookup(name string) []*Node {
	var byName, byType []*Node
	for _, m := range s.members {
		own := m.spec.Name
		if own == "" && m.comp != nil {
			own = defaultName(m.Type)
		}
		if own == name {
			byName = append(byName, m)
		} else if m.Type == name {
			byType = append(byType, m)
		}
	}
	if len(byName) > 0 {
		return byName
	}
	return byType
}

// candidates are the names a reference in s could have meant, for "did you mean".
func (s *scope) candidates() []string {
	var out []string
	for _, m := range s.members {
		out = append(out, cmp.Or(m.spec.Name, m.Type))
	}
	if s.comp != nil {
		out = append(out, s.comp.inKeys...)
	}
	return out
}

// inputKey reports which of s's composite input keys text names: the key itself, or Beam's
// input.<key>.
func (s *scope) inputKey(text string) (string, bool) {
	if s.comp == nil {
		return "", false
	}
	for _, k := range s.comp.inKeys {
		if text == k || text == plainInput+"."+k {
			return k, true
		}
	}
	return "", false
}

// resolveRef finds what reference r, written in scope s by transform who, names.
func (f *file) resolveRef(s *scope, r ref, who *Node) (producer, bool) {
	if r.prev != nil { // chains: the previous transform, bare
		return f.outputOf(r.prev, "", false, r.node)
	}
	if k, ok := s.inputKey(r.text); ok {
		return f.compositeInput(s.comp, k)
	}
	name, tag := r.text, ""
	matches := s.lookup(name)
	if len(matches) == 0 {
		if i := strings.LastIndex(r.text, "."); i > 0 {
			name, tag = r.text[:i], r.text[i+1:]
			matches = s.lookup(name)
		}
	}
	where := "input"
	if r.output {
		where = "output"
	}
	switch {
	case len(matches) == 0:
		d := f.dec.Errorf(f.dec.At(r.node), "unknown transform %q in the %s of %s%s", r.text, where, who.Describe(), diag.DidYouMean(name, s.candidates()))
		if s.comp != nil {
			d.Detail = fmt.Sprintf("inside %s a reference names one of its transforms or its inputs (%s); to read a transform outside it, add it to its input:",
				s.comp.node.Describe(), cmp.Or(strings.Join(s.comp.inKeys, ", "), "none"))
		}
	case len(matches) > 1:
		var lines []string
		for _, m := range matches {
			lines = append(lines, fmt.Sprint(m.Pos.Line))
		}
		f.dec.Errorf(f.dec.At(r.node), "ambiguous transform %q in the %s of %s: it matches the transforms at lines %s",
			name, where, who.Describe(), strings.Join(lines, ", ")).Detail = "give them distinct name: keys and refer to one by name"
	case matches[0] == who:
		f.dec.Errorf(f.dec.At(r.node), "%s cannot consume its own output", who.Describe())
	default:
		return f.outputOf(matches[0], tag, tag != "", r.node)
	}
	return producer{}, false
}

// outputOf is output tag of member m (its only or main output when not explicit), seen
// through m when it is a chain or composite.
func (f *file) outputOf(m *Node, tag string, explicit bool, at *yaml.Node) (producer, bool) {
	c := m.comp
	if c == nil {
		return producer{node: m, tag: tag, explicit: explicit, at: at}, true
	}
	if c.implicit { // a chain's last transform's outputs
		last := c.last()
		if last == nil {
			return producer{}, false // reported: it has no transforms
		}
		return f.outputOf(last, tag, explicit, at)
	}
	switch {
	case len(c.outKeys) == 0:
		f.dec.Errorf(f.dec.At(at), "%s has no output to consume", m.Describe()).
			Detail = fmt.Sprintf("name what it produces with output:, e.g. output: %s", lastName(c))
		return producer{}, false
	case !explicit && len(c.outKeys) == 1:
		tag = c.outKeys[0]
	case !explicit:
		f.dec.Errorf(f.dec.At(at), "%s has several outputs (%s): name one, e.g. %s.%s",
			m.Describe(), strings.Join(c.outKeys, ", "), cmp.Or(m.spec.Name, m.Type), c.outKeys[0])
		return producer{}, false
	}
	if _, ok := c.outputs[tag]; !ok {
		f.dec.Errorf(f.dec.At(at), "%s has no output %q (its outputs: %s)", m.Describe(), tag, strings.Join(c.outKeys, ", "))
		return producer{}, false
	}
	return f.compositeOutput(c, tag, at)
}

// lastName names c's last transform, for hints.
func lastName(c *composite) string {
	if last := c.last(); last != nil {
		return cmp.Or(last.spec.Name, last.Type)
	}
	return "Filter"
}

// last is the last transform of a chain (before its extra_transforms), or nil.
func (c *composite) last() *Node { return c.scope.last }

// compositeOutput resolves output tag of c, once.
func (f *file) compositeOutput(c *composite, tag string, at *yaml.Node) (producer, bool) {
	return f.memo(c.out, tag, c, func() (producer, bool) {
		return f.resolveRef(c.scope, c.outputs[tag], c.node)
	})
}

// compositeInput resolves input key k of c in the scope around it, once: a list is merged by
// an implicit Flatten there.
func (f *file) compositeInput(c *composite, k string) (producer, bool) {
	return f.memo(c.in, k, c, func() (producer, bool) {
		var refs []ref
		for _, r := range c.node.refs {
			if cmp.Or(r.key, plainInput) == k {
				refs = append(refs, r)
			}
		}
		var t producer
		ok := false
		switch {
		case len(refs) == 1:
			t, ok = f.resolveRef(c.node.scope, refs[0], c.node)
		case len(refs) > 1:
			fl := f.implicitFlatten(c.node, k, refs)
			t, ok = producer{node: fl, at: refs[0].node}, true
		}
		if ok && c.scope.window != nil {
			t.window = c.scope.window // Beam applies a composite's windowing to its inputs
		}
		return t, ok
	})
}

// memo resolves key of m once, reporting a cycle through c's inputs and outputs.
func (f *file) memo(m map[string]*resolution, key string, c *composite, resolve func() (producer, bool)) (producer, bool) {
	r := m[key]
	switch {
	case r == nil:
		r = &resolution{state: 1}
		m[key] = r
		r.t, r.ok = resolve()
		r.state = 2
	case r.state == 1:
		f.dec.Errorf(c.node.Pos, "the inputs and outputs of %s form a cycle", c.node.Describe())
		r.state = 2
	}
	return r.t, r.ok
}

// flattensLists reports whether n reads a list under input key k through an implicit Flatten:
// a named input always (Beam's), a plain one when n takes one input.
func flattensLists(n *Node, k string) bool {
	if n.Type == "Flatten" {
		return false
	}
	if k != "" {
		return true
	}
	spec, ok := component.Lookup(n.Type)
	return ok && spec.MaxInputs == 1
}

// implicitFlatten adds the Flatten that merges the list refs read by n under key k, named as
// Beam names it, "<name>-Flatten[<key>]", in n's scope.
func (f *file) implicitFlatten(n *Node, k string, refs []ref) *Node {
	list := component.MappingValue(n.yaml, "input")
	if list != nil && list.Kind == yaml.MappingNode {
		list = component.MappingValue(list, k)
	}
	at := cmp.Or(list, refs[0].node)
	typeKey := &yaml.Node{Kind: yaml.ScalarNode, Value: "type", Line: at.Line, Column: at.Column}
	typeVal := &yaml.Node{Kind: yaml.ScalarNode, Value: "Flatten", Line: at.Line, Column: at.Column}
	inKey := &yaml.Node{Kind: yaml.ScalarNode, Value: "input", Line: at.Line, Column: at.Column}
	y := &yaml.Node{Kind: yaml.MappingNode, Line: at.Line, Column: at.Column, Content: []*yaml.Node{typeKey, typeVal, inKey, at}}
	fl := &Node{Type: "Flatten", Name: fmt.Sprintf("%s-Flatten[%s]", n.Name, cmp.Or(k, plainInput)), Pos: f.dec.At(at),
		yaml: y, scope: n.scope, spec: transformSpec{Type: "Flatten", Input: at}, explicitInput: true}
	for _, r := range refs {
		r.key = ""
		fl.refs = append(fl.refs, r)
	}
	f.leaves = append(f.leaves, fl)
	if f.implicitFor == nil {
		f.implicitFor = map[*Node]*Node{}
	}
	f.implicitFor[fl] = n
	return fl
}

// windowIntoConfig moves WindowInto's config.windowing (Beam's spelling) to its windowing:
// key, where the runner reads the windowing of every transform.
func (f *file) windowIntoConfig(n *Node) {
	if n.Type != "WindowInto" || n.spec.Config == nil {
		return
	}
	w := component.MappingValue(n.spec.Config, "windowing")
	if w == nil {
		return
	}
	if n.spec.Windowing != nil {
		f.dec.Errorf(f.dec.At(w), "%s has windowing: both in config: and beside it: give it once", n.Describe())
		return
	}
	n.spec.Windowing, n.spec.Config = w, withoutKey(n.spec.Config, "windowing")
}

// warnUnnamedScope warns when stateful transform n sits in an unnamed chain or composite:
// its state is keyed by a name (Chain#2/...) that another unnamed one written above it would
// take over.
func warnUnnamedScope(n *Node, warnings *diag.List) {
	for s := n.scope; s != nil && s.comp != nil; s = s.parent {
		if s.comp.spec.Name == "" {
			warnings.Add(n.Pos, "%s keeps state under %q, a name that depends on the unnamed %s around it", n.Describe(), n.Name, s.comp.node.Type).
				Detail = "give the " + s.comp.node.Type + " a name: so that the state stays its own when the file changes (docs/structure.md)"
			return
		}
	}
}
