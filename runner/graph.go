package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// ref is one input reference of a transform before it is resolved.
type ref struct {
	key  string     // the key of a named input, else ""
	text string     // the reference as written ("X" or "X.tag"); empty for chain links
	node *yaml.Node // where it is written
	prev *Node      // chain pipelines: the previous transform
}

// collect reads the transforms of f into nodes, in file order, with their unresolved inputs.
func (f *file) collect() []*Node {
	var nodes []*Node
	add := func(n *yaml.Node, role string) *Node {
		var spec transformSpec
		n = f.refuseDependencies(n)
		if !f.dec.Decode(n, &spec, "transform") {
			if spec.Type == "" || n.Kind != yaml.MappingNode {
				return nil
			}
			// Kept, so that its type is checked and references to it resolve, but not built
			// (a misspelt key may hold its config): the file's other problems are reported
			// with this one.
			node := &Node{Type: spec.Type, Name: spec.Name, Pos: f.dec.At(n), spec: spec, yaml: n, role: role, broken: true}
			nodes = append(nodes, node)
			return node
		}
		node := &Node{Type: spec.Type, Name: spec.Name, Pos: f.dec.At(n), spec: spec, yaml: n, role: role}
		if node.Name == "" {
			node.Name = spec.Type
		}
		if spec.Input != nil {
			node.refs = f.inputRefs(spec.Input)
			node.explicitInput = true
		}
		nodes = append(nodes, node)
		return node
	}
	var prev *Node
	link := func(n *Node) {
		if n == nil {
			prev = nil
			return
		}
		if f.chain && prev != nil {
			if n.explicitInput {
				f.dec.Errorf(f.dec.At(component.MappingValue(n.yaml, "input")),
					"%s has an input, but in a chain each transform consumes the previous one", n.Describe()).
					Detail = "remove input:, or make the pipeline type: composite"
			}
			n.refs = []ref{{prev: prev, node: n.yaml}}
		}
		prev = n
	}
	if s := f.pipeline.Source; s != nil {
		src := add(s, "source")
		if src != nil && len(src.refs) > 0 {
			f.dec.Errorf(f.dec.At(component.MappingValue(s, "input")), "the pipeline's source cannot have an input")
		}
		link(src)
	}
	for i := range f.pipeline.Transforms {
		n := add(&f.pipeline.Transforms[i], "")
		if f.chain {
			link(n)
		} else {
			prev = n
		}
	}
	if s := f.pipeline.Sink; s != nil {
		last := prev
		n := add(s, "sink")
		if n != nil && !n.explicitInput && last != nil {
			n.refs = []ref{{prev: last, node: s}}
		}
	}
	for i := range f.pipeline.ExtraTransforms {
		n := add(&f.pipeline.ExtraTransforms[i], "")
		if n != nil && !n.explicitInput {
			f.dec.Errorf(n.Pos, "%s in extra_transforms needs an input", n.Describe())
		}
	}
	f.checkNames(nodes)
	return nodes
}

// refuseDependencies reports a transform's `dependencies:` (Beam installs the packages it
// lists for the transform) at its key, and returns the transform without it, so that the
// rest of the transform is checked.
func (f *file) refuseDependencies(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "dependencies" {
			continue
		}
		f.dec.Errorf(f.dec.At(n.Content[i]), "dependencies: sluice installs no packages, so it cannot give this transform the ones it lists").
			Detail = "sluice runs no pip or Maven installs at run time: remove dependencies:, and write the transform with " +
			"sluice's built-in transforms and expressions (docs/expressions.md), or run this pipeline on Beam"
		c := *n
		c.Content = append(append([]*yaml.Node(nil), n.Content[:i]...), n.Content[i+2:]...)
		return &c
	}
	return n
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

// resolve links every reference to the transform it names. The output tag is checked later,
// once the producer is built and its outputs are known.
func (f *file) resolve(nodes []*Node) {
	byName := map[string][]*Node{}
	byType := map[string][]*Node{}
	var names []string
	for _, n := range nodes {
		if n.spec.Name != "" {
			byName[n.spec.Name] = append(byName[n.spec.Name], n)
			names = append(names, n.spec.Name)
		}
		byType[n.Type] = append(byType[n.Type], n)
	}
	lookup := func(s string) []*Node {
		if m := byName[s]; len(m) > 0 {
			return m
		}
		return byType[s]
	}
	for _, n := range nodes {
		for _, r := range n.refs {
			if r.prev != nil {
				n.Inputs = append(n.Inputs, Edge{From: r.prev, Key: r.key})
				continue
			}
			target, tag := r.text, ""
			matches := lookup(target)
			if len(matches) == 0 {
				if i := strings.LastIndex(r.text, "."); i > 0 {
					target, tag = r.text[:i], r.text[i+1:]
					matches = lookup(target)
				}
			}
			if len(matches) != 1 || matches[0] == n {
				n.unresolved = true // checked for its type and config only: its inputs are not all known
			}
			switch {
			case len(matches) == 0:
				cands := append(append([]string(nil), names...), keys(byType)...)
				f.dec.Errorf(f.dec.At(r.node), "unknown transform %q in the input of %s%s", r.text, n.Describe(), diag.DidYouMean(target, cands))
			case len(matches) > 1:
				var lines []string
				for _, m := range matches {
					lines = append(lines, fmt.Sprint(m.Pos.Line))
				}
				f.dec.Errorf(f.dec.At(r.node), "ambiguous transform %q in the input of %s: it matches the transforms at lines %s",
					target, n.Describe(), strings.Join(lines, ", ")).Detail = "give them distinct name: keys and refer to one by name"
			case matches[0] == n:
				f.dec.Errorf(f.dec.At(r.node), "%s cannot consume its own output", n.Describe())
			default:
				n.Inputs = append(n.Inputs, Edge{From: matches[0], Tag: tag, Key: r.key, explicitTag: tag != "", node: r.node})
			}
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
