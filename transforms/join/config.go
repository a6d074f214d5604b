package join

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Config is the config of Join, as Beam YAML writes it.
type Config struct {
	Type       yaml.Node `yaml:"type" doc:"inner (default), left, right or outer; or {outer: [inputs]}: every record of those inputs kept, the others inner-joined."`
	Equalities yaml.Node `yaml:"equalities" required:"true" doc:"A field every input has (joined on it), or a list of mappings {input: field, ...} whose fields must be equal; together they must connect every input."`
	Fields     yaml.Node `yaml:"fields" doc:"The output fields per input: a list of field names, a mapping new name: field, or '*'. Inputs not listed give all their fields. Default: all fields of all inputs."`
}

// kind is how one input is joined to those before it.
type kind uint8

const (
	inner kind = iota
	left       // every record of the inputs before it, padded with nulls
	right      // every record of this input, padded with nulls
	full       // both
)

var kindNames = map[string]kind{"inner": inner, "left": left, "right": right, "outer": full}

// col is a field of an input.
type col struct{ input, field int }

// cond is one equality of a step: a field of an input before it equals a field of the input
// the step joins. loose compares numbers of different kinds (or of an any field) as numbers.
type cond struct {
	left  col
	right int
	loose bool
}

// step joins input i (steps[i-1]) to the result of joining the inputs before it.
type step struct {
	kind kind
	on   []cond
}

// member is one input's field in an equality, with where it is written.
type member struct {
	col
	node *yaml.Node
}

// builder checks a config against the inputs, reporting every problem through ctx.
type builder struct {
	ctx   *component.Context
	names []string
	ins   []*schemas.Schema
	ok    bool
}

func (b *builder) errorf(n *yaml.Node, format string, args ...any) *diag.Diagnostic {
	b.ok = false
	if n == nil || n.Kind == 0 {
		return b.ctx.Errorf(b.ctx.Pos, format, args...)
	}
	return b.ctx.Errorf(b.ctx.At(n), format, args...)
}

// input returns the index of the input named by n.
func (b *builder) input(n *yaml.Node, where string) (int, bool) {
	if i := slices.Index(b.names, n.Value); i >= 0 {
		return i, true
	}
	b.errorf(n, "%q in %s is not an input of %s (its inputs: %s)%s", n.Value, where, b.ctx.Describe(),
		strings.Join(b.names, ", "), diag.DidYouMean(n.Value, b.names))
	return 0, false
}

// field returns the index of the field named by n in input i.
func (b *builder) field(i int, n *yaml.Node, where string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		b.errorf(n, "%s: a field name must be a string", where)
		return 0, false
	}
	if f, ok := b.ins[i].Index(n.Value); ok {
		return f, true
	}
	b.errorf(n, "unknown field %q of input %q in %s%s", n.Value, b.names[i], where, diag.DidYouMean(n.Value, b.ins[i].Names()))
	return 0, false
}

func (b *builder) fieldOf(c col) schemas.Field { return b.ins[c.input].Fields[c.field] }

// kinds decodes type: one kind for every step, or the set of inputs to outer-join.
func (b *builder) kinds(n *yaml.Node) []kind {
	out := make([]kind, len(b.names)-1)
	switch n.Kind {
	case 0: // absent: inner, as Beam
		return out
	case yaml.ScalarNode:
		k, ok := kindNames[n.Value]
		if !ok {
			b.errorf(n, "join type %q is not one of inner, left, right, outer%s", n.Value, diag.DidYouMean(n.Value, []string{"inner", "left", "right", "outer"})).
				Detail = "or {outer: [inputs]} to outer-join some inputs and inner-join the others"
		}
		for i := range out {
			out[i] = k
		}
		return out
	case yaml.MappingNode:
		if len(n.Content) == 2 && n.Content[0].Value == "outer" && n.Content[1].Kind == yaml.SequenceNode {
			outer := make([]bool, len(b.names))
			for _, item := range n.Content[1].Content {
				if i, ok := b.input(item, "type.outer"); ok {
					outer[i] = true
				}
			}
			// As Beam: an input is padded when it is outer and the one it is joined to is
			// not, both when both are.
			for i := range out {
				switch l, r := outer[i], outer[i+1]; {
				case l && r:
					out[i] = full
				case l:
					out[i] = left
				case r:
					out[i] = right
				}
			}
			return out
		}
	}
	b.errorf(n, "type must be inner, left, right or outer, or {outer: [inputs]}, e.g. {outer: [%s]}", strings.Join(b.names[:2], ", "))
	return out
}

// equalities decodes equalities into groups of fields that must be equal, each group in the
// order written.
func (b *builder) equalities(n *yaml.Node) [][]member {
	if n.Kind == yaml.ScalarNode {
		var eq []member
		for i := range b.names {
			if f, ok := b.field(i, n, "equalities"); ok {
				eq = append(eq, member{col{i, f}, n})
			}
		}
		return [][]member{eq}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		b.errorf(n, "equalities must be a field every input has, or a list of mappings {input: field, ...}, e.g. [{%s: id, %s: id}]", b.names[0], b.names[1])
		return nil
	}
	var out [][]member
	for _, m := range n.Content {
		if m.Kind != yaml.MappingNode || len(m.Content) < 4 {
			b.errorf(m, "each equality must map two or more inputs to a field, e.g. {%s: id, %s: id}", b.names[0], b.names[1])
			continue
		}
		var eq []member
		for i := 0; i+1 < len(m.Content); i += 2 {
			in, ok := b.input(m.Content[i], "equalities")
			if !ok {
				continue
			}
			if f, ok := b.field(in, m.Content[i+1], "equalities"); ok {
				eq = append(eq, member{col{in, f}, m.Content[i+1]})
			}
		}
		out = append(out, eq)
	}
	return out
}

// keyKinds are the kinds a join compares.
var keyKinds = map[schemas.Kind]bool{schemas.Any: true, schemas.Bool: true, schemas.Int64: true, schemas.Float64: true,
	schemas.String: true, schemas.Bytes: true, schemas.Timestamp: true, schemas.Date: true, schemas.Decimal: true}

func numeric(k schemas.Kind) bool { return k == schemas.Int64 || k == schemas.Float64 }

// loose says whether values of kinds a and b are compared as numbers of either kind.
func loose(a, b schemas.Kind) bool { return a != b || a == schemas.Any }

// checkTypes reports fields that cannot be compared, or not with each other.
func (b *builder) checkTypes(eqs [][]member) {
	for _, eq := range eqs {
		for j, m := range eq {
			f := b.fieldOf(m.col)
			if !keyKinds[f.Type.Kind] {
				b.errorf(m.node, "%s.%s is %s: a join matches integers, numbers, strings, booleans, bytes, timestamps, dates or decimals",
					b.names[m.input], f.Name, f.Type.Articled())
				continue
			}
			if j == 0 {
				continue
			}
			g := b.fieldOf(eq[0].col)
			a, c := f.Type.Kind, g.Type.Kind
			if a != c && a != schemas.Any && c != schemas.Any && !(numeric(a) && numeric(c)) && keyKinds[c] {
				b.errorf(m.node, "%s.%s is %s but %s.%s is %s: a join matches equal values of one type",
					b.names[m.input], f.Name, f.Type.Articled(), b.names[eq[0].input], g.Name, g.Type.Articled()).
					Detail = "convert one of them first with MapToFields"
			}
		}
	}
}

// steps turns the equalities into the conditions of each step, as Beam pairs them: the first
// field of an equality with each of the others, on the step of the later input.
func (b *builder) steps(eqs [][]member, kinds []kind, at *yaml.Node) []step {
	steps := make([]step, len(b.names)-1)
	for i := range steps {
		steps[i].kind = kinds[i]
	}
	for _, eq := range eqs {
		for _, m := range eq[min(1, len(eq)):] {
			l, r := eq[0].col, m.col
			if l.input == r.input {
				continue
			}
			if l.input > r.input {
				l, r = r, l
			}
			c := cond{left: l, right: r.field, loose: loose(b.fieldOf(l).Type.Kind, b.fieldOf(r).Type.Kind)}
			steps[r.input-1].on = append(steps[r.input-1].on, c)
		}
	}
	for i, s := range steps {
		if len(s.on) == 0 {
			b.errorf(at, "no equality joins input %q to the inputs before it (%s)", b.names[i+1], strings.Join(b.names[:i+1], ", ")).
				Detail = "the inputs are joined in the order of input:, each on an equality with one before it; add one or reorder input:"
		}
	}
	return steps
}

// sharedKey returns, for every input, the fields of the key all inputs share (the groups of
// equal fields that reach every input), and per key part whether it compares loosely.
func (b *builder) sharedKey(eqs [][]member) ([][]int, []bool) {
	parent := map[col]col{}
	var find func(c col) col
	find = func(c col) col {
		p, ok := parent[c]
		if !ok || p == c {
			parent[c] = c
			return c
		}
		r := find(p)
		parent[c] = r
		return r
	}
	var order []col
	for _, eq := range eqs {
		for _, m := range eq {
			if _, seen := parent[m.col]; !seen {
				order = append(order, m.col)
			}
			parent[find(m.col)] = find(eq[0].col)
		}
	}
	keys := make([][]int, len(b.names))
	var looseParts []bool
	done := map[col]bool{}
	for _, c := range order {
		root := find(c)
		if done[root] {
			continue
		}
		done[root] = true
		first := make([]int, len(b.names))
		for i := range first {
			first[i] = -1
		}
		lax, kind := false, b.fieldOf(c).Type.Kind
		for _, m := range order {
			if find(m) == root {
				if first[m.input] < 0 {
					first[m.input] = m.field
				}
				lax = lax || loose(kind, b.fieldOf(m).Type.Kind)
			}
		}
		if slices.Contains(first, -1) {
			continue // not shared by every input
		}
		for i, f := range first {
			keys[i] = append(keys[i], f)
		}
		looseParts = append(looseParts, lax)
	}
	return keys, looseParts
}

// connected reports whether the equalities link every input to every other.
func (b *builder) connected(eqs [][]member) bool {
	reach := map[int]bool{0: true}
	for grew := true; grew; {
		grew = false
		for _, eq := range eqs {
			linked := slices.ContainsFunc(eq, func(m member) bool { return reach[m.input] })
			for _, m := range eq {
				if linked && !reach[m.input] {
					reach[m.input], grew = true, true
				}
			}
		}
	}
	return len(reach) == len(b.names)
}

// nullable says, per input, whether an outer join pads it with nulls.
func nullable(steps []step, n int) []bool {
	out := make([]bool, n)
	for i, s := range steps {
		if s.kind == left || s.kind == full {
			out[i+1] = true
		}
		if s.kind == right || s.kind == full {
			for j := 0; j <= i; j++ {
				out[j] = true
			}
		}
	}
	return out
}

// output is one output field before its name is made unique.
type output struct {
	name     string
	from     col
	explicit bool
}

// outputs decodes fields: the listed inputs' fields in the order written, then every field
// of the inputs not listed.
func (b *builder) outputs(n *yaml.Node) []output {
	var out []output
	listed := make([]bool, len(b.names))
	all := func(i int) {
		for f, fd := range b.ins[i].Fields {
			out = append(out, output{name: fd.Name, from: col{i, f}})
		}
	}
	if n.Kind == yaml.MappingNode {
		explicit := map[string]bool{}
		name := func(k *yaml.Node, c col) {
			if explicit[k.Value] {
				b.errorf(k, "output field %q is named twice in fields", k.Value)
			}
			explicit[k.Value] = true
			out = append(out, output{name: k.Value, from: c, explicit: true})
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			in, ok := b.input(n.Content[i], "fields")
			if !ok {
				continue
			}
			listed[in] = true
			switch v := n.Content[i+1]; {
			case v.Kind == yaml.ScalarNode && v.Value == "*":
				all(in)
			case v.Kind == yaml.SequenceNode:
				for _, item := range v.Content {
					if f, ok := b.field(in, item, "fields"); ok {
						name(item, col{in, f})
					}
				}
			case v.Kind == yaml.MappingNode:
				for j := 0; j+1 < len(v.Content); j += 2 {
					if f, ok := b.field(in, v.Content[j+1], "fields"); ok {
						name(v.Content[j], col{in, f})
					}
				}
			default:
				b.errorf(v, "the fields of input %q must be a list of field names, a mapping new name: field, or '*'", n.Content[i].Value)
			}
		}
	} else if n.Kind != 0 && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		b.errorf(n, "fields must map inputs to their output fields, e.g. {%s: [id, name], %s: {total: amount}}", b.names[0], b.names[1])
	}
	for i := range b.names {
		if !listed[i] {
			all(i)
		}
	}
	return out
}

// unique names the outputs as Beam SQL does: a name already taken gets the first free of
// name0, name1 ...
func unique(outs []output) []string {
	used := map[string]bool{}
	names := make([]string, len(outs))
	for i, o := range outs {
		name := o.name
		for j := 0; used[name]; j++ {
			name = fmt.Sprintf("%s%d", o.name, j)
		}
		used[name] = true
		names[i] = name
	}
	return names
}
