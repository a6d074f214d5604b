package runner

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/component"
	"gopkg.in/yaml.v3"
)

// ref is one input reference of a transform before it is resolved.
type ref struct {
	key  string     // the key of a named input, else ""
	text string     // the reference as written ("X" or "X.tag"); empty for chain links
	node *yaml.Node // where it is written
	prev *Node      // chain pipelines: the previous transform
	// output marks a reference in a composite's output:, for messages.
	output bool
}

// collect reads the transforms of f into nodes, in file order, with their unresolved inputs:
// the transforms that run (nested ones too: scope.go), not the chain and composite
// transforms that only group them.
func (f *file) collect() []*Node {
	top := &scope{chain: f.chain, window: f.window}
	f.collectScope(top, f.pipeline.Source, f.pipeline.Transforms, f.pipeline.Sink, f.pipeline.ExtraTransforms)
	return f.leaves
}

// collectScope reads the transforms of one scope: the pipeline, or a nested chain or
// composite. A nested chain's first transform consumes the chain's inputs.
func (f *file) collectScope(s *scope, source *yaml.Node, transforms []yaml.Node, sink *yaml.Node, extra []yaml.Node) {
	var prev *Node
	first := true
	// link gives n the inputs its place implies; a composite's transforms are read after it,
	// since a nested chain's first transform takes them.
	link := func(n *Node) {
		switch {
		case !s.chain:
		case prev != nil:
			if n.explicitInput {
				f.dec.Errorf(f.dec.At(component.MappingValue(n.yaml, "input")),
					"%s has an input, but in a chain each transform consumes the previous one", n.Describe()).
					Detail = "remove input:, or make it type: composite"
			}
			n.refs = []ref{{prev: prev, node: n.yaml}}
		case first && s.comp != nil && !n.explicitInput:
			n.refs = s.comp.chainInputs()
		}
		prev, first = n, false
	}
	if source != nil {
		src := f.addTransform(s, source, "source", func(n *Node) {
			if len(n.refs) > 0 {
				f.dec.Errorf(f.dec.At(component.MappingValue(source, "input")), "the source of %s cannot have an input", s.describe())
			}
			n.explicitInput = true // Beam's explicitly empty input: a chain's inputs skip it
			link(n)
		})
		if src == nil {
			prev, first = nil, false
		}
	}
	for i := range transforms {
		n := f.addTransform(s, &transforms[i], "", func(n *Node) {
			if s.chain {
				link(n)
			} else {
				prev = n
			}
		})
		if n == nil && s.chain {
			prev, first = nil, false
		}
	}
	s.last = prev
	if sink != nil {
		last := prev
		if n := f.addTransform(s, sink, "sink", func(n *Node) {
			if !n.explicitInput && last != nil {
				n.refs = []ref{{prev: last, node: sink}}
			}
		}); n != nil {
			s.last = n
		}
	}
	for i := range extra {
		f.addTransform(s, &extra[i], "", func(n *Node) {
			if !n.explicitInput {
				f.dec.Errorf(n.Pos, "%s in extra_transforms needs an input", n.Describe())
			}
		})
	}
	f.checkNames(s.members)
	for _, n := range s.members {
		if len(n.refs) == 0 {
			n.inherited = s.rootWindow()
		}
	}
}

// addTransform reads the transform at n into scope s; placed gives it the inputs its place
// implies. It returns nil for a transform too broken to keep.
func (f *file) addTransform(s *scope, n *yaml.Node, role string, placed func(*Node)) *Node {
	n = f.refuseDependencies(n)
	if t := component.MappingValue(n, "type"); t != nil && (t.Value == "chain" || t.Value == "composite") {
		return f.addComposite(s, n, role, placed)
	}
	if component.MappingValue(n, "type") != nil {
		n = f.refuseNesting(n)
	}
	var spec transformSpec
	ok := f.dec.Decode(n, &spec, "transform")
	if !ok && (spec.Type == "" || n.Kind != yaml.MappingNode) {
		return nil
	}
	// A broken transform is kept, so that its type is checked and references to it resolve,
	// but not built (a misspelt key may hold its config): the file's other problems are
	// reported with this one.
	name := spec.Name
	if name == "" {
		name = s.freeName(spec.Type)
	}
	node := &Node{Type: spec.Type, Name: s.prefix + name, Pos: f.dec.At(n), spec: spec, yaml: n,
		role: role, scope: s, broken: !ok}
	f.windowIntoConfig(node)
	if ok && spec.Input != nil {
		node.refs = f.inputRefs(spec.Input)
		node.explicitInput = true
	}
	s.members = append(s.members, node)
	f.leaves = append(f.leaves, node)
	placed(node)
	return node
}

// refuseDependencies reports a transform's `dependencies:` (Beam installs the packages it
// lists for the transform) at its key, and returns the transform without it, so that the
// rest of the transform is checked.
func (f *file) refuseDependencies(n *yaml.Node) *yaml.Node {
	k := mappingKey(n, "dependencies")
	if k == nil {
		return n
	}
	f.dec.Errorf(f.dec.At(k), "dependencies: sluice installs no packages, so it cannot give this transform the ones it lists").
		Detail = "sluice runs no pip or Maven installs at run time: remove dependencies:, and write the transform with " +
		"sluice's built-in transforms and expressions (docs/expressions.md), or run this pipeline on Beam"
	return withoutKey(n, "dependencies")
}

// refuseNesting reports transforms: on a transform that is not a chain or composite, with
// what it takes to nest, and returns the transform without it.
func (f *file) refuseNesting(n *yaml.Node) *yaml.Node {
	k := mappingKey(n, "transforms")
	if k == nil {
		return n
	}
	f.dec.Errorf(f.dec.At(k), "transforms: belongs to a nested chain or composite, not to a %s", component.MappingValue(n, "type").Value).
		Detail = "to group transforms, make this type: chain (each consumes the previous) or type: composite (they name their inputs), docs/structure.md"
	return withoutKey(n, "transforms")
}

// mappingKey returns the key node of key in mapping n, or nil.
func mappingKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// withoutKey returns a copy of mapping n without key.
func withoutKey(n *yaml.Node, key string) *yaml.Node {
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != key {
			c.Content = append(c.Content, n.Content[i], n.Content[i+1])
		}
	}
	return &c
}

// inputRefs reads an input: value: a reference, a list of them, or a mapping of named inputs.
func (f *file) inputRefs(n *yaml.Node) []ref {
	var refs []ref
	one := func(key string, v *yaml.Node) {
		switch {
		case v.Kind == yaml.ScalarNode && v.Value != "":
			refs = append(refs, ref{key: key, text: v.Value, node: v})
		case v.Kind == yaml.SequenceNode:
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode || item.Value == "" {
					f.dec.Errorf(f.dec.At(item), "an input must be the name of a transform")
					continue
				}
				refs = append(refs, ref{key: key, text: item.Value, node: item})
			}
		default:
			f.dec.Errorf(f.dec.At(v), "an input must be the name of a transform, or a list of them")
		}
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			one(n.Content[i].Value, n.Content[i+1])
		}
		return refs // an empty mapping is Beam's explicitly empty input
	}
	one("", n)
	return refs
}

// checkNames reports names used twice in one scope.
func (f *file) checkNames(nodes []*Node) {
	first := map[string]*Node{}
	for _, n := range nodes {
		if n.spec.Name == "" {
			continue
		}
		if prev, dup := first[n.spec.Name]; dup {
			f.dec.Errorf(f.dec.At(component.MappingValue(n.yaml, "name")),
				"duplicate transform name %q (first used at line %d)", n.spec.Name, prev.Pos.Line).
				Detail = "names must be unique so that inputs can refer to them"
			continue
		}
		first[n.spec.Name] = n
	}
}

// resolve links every reference to the transform it names, through the inputs and outputs of
// nested chains and composites, adding a Flatten where a one-input transform reads a list.
// It returns the nodes with those Flattens. The output tag is checked later, once the
// producer is built and its outputs are known.
func (f *file) resolve(nodes []*Node) []*Node {
	f.leaves = nodes
	for _, c := range f.composites { // every input and output, also those nothing reads
		for _, k := range c.inKeys {
			f.compositeInput(c, k)
		}
		for _, k := range c.outKeys {
			f.compositeOutput(c, k, c.outputs[k].node)
		}
	}
	for i := 0; i < len(f.leaves); i++ { // implicit Flattens are appended as they are made
		f.resolveInputs(f.leaves[i])
	}
	return f.leaves
}

// resolveInputs links n's references, grouping a list input of a one-input transform under an
// implicit Flatten (Beam's "<name>-Flatten[<key>]").
func (f *file) resolveInputs(n *Node) {
	var order []string
	byKey := map[string][]ref{}
	for _, r := range n.refs {
		if _, seen := byKey[r.key]; !seen {
			order = append(order, r.key)
		}
		byKey[r.key] = append(byKey[r.key], r)
	}
	for _, k := range order {
		refs := byKey[k]
		if len(refs) > 1 && flattensLists(n, k) {
			fl := f.implicitFlatten(n, k, refs)
			n.Inputs = append(n.Inputs, Edge{From: fl, Key: k, node: refs[0].node})
			continue
		}
		for _, r := range refs {
			t, ok := f.resolveRef(n.scope, r, cmp.Or(f.implicitFor[n], n))
			if !ok {
				n.unresolved = true // checked for its type and config only: its inputs are not all known
				continue
			}
			if t.window != nil && n.spec.Windowing == nil {
				n.inherited = t.window
			}
			n.Inputs = append(n.Inputs, Edge{From: t.node, Tag: t.tag, Key: r.key, explicitTag: t.explicit, node: t.at})
		}
	}
}

// order returns the nodes in topological order, reporting cycles. The input that closes a
// cycle is dropped and its consumer checked for its type and config only, so that the rest of
// the file is still checked.
func (f *file) order(nodes []*Node) []*Node {
	state := map[*Node]int{} // 0 new, 1 visiting, 2 done
	var out []*Node
	var visit func(n *Node, path []*Node)
	visit = func(n *Node, path []*Node) {
		if state[n] != 0 {
			return
		}
		state[n] = 1
		path = append(path, n)
		kept := n.Inputs[:0]
		for _, e := range n.Inputs {
			if state[e.From] == 1 {
				var names []string
				for _, p := range append(path[slices.Index(path, e.From):], e.From) {
					names = append(names, p.Name)
				}
				f.dec.Errorf(e.From.Pos, "the inputs form a cycle: %s", strings.Join(names, " -> "))
				n.unresolved = true
				continue
			}
			visit(e.From, path)
			kept = append(kept, e)
		}
		n.Inputs = kept
		state[n] = 2
		out = append(out, n)
	}
	for _, n := range nodes {
		visit(n, nil)
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
