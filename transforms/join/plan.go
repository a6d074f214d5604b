package join

import (
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

// Plan is a built Join: how its inputs are joined and what it outputs. It is immutable and
// safe for concurrent use.
type Plan struct {
	// Out is the output schema.
	Out *schemas.Schema

	who   string
	n     int     // the number of inputs
	steps []step  // steps[i-1] joins input i
	keys  [][]int // per input: the fields of the key every input shares (maybe none)
	loose []bool  // per part of that key: numbers compared as numbers
	proj  []col   // where each output field comes from
}

// Build checks a Join config against the inputs of ctx and returns its Plan, or nil when
// there were problems (reported through ctx, each at its place in the file).
func Build(ctx *component.Context, cfg *Config) *Plan {
	b := &builder{ctx: ctx, ok: true}
	for _, in := range ctx.Inputs {
		b.names, b.ins = append(b.names, in.Name), append(b.ins, in.Schema)
	}
	if !b.checkInputs() {
		return nil
	}
	kinds := b.kinds(&cfg.Type)
	outs := b.outputs(&cfg.Fields)
	ok := b.ok
	b.ok = true
	eqs := b.equalities(&cfg.Equalities)
	var steps []step
	if b.ok { // the equalities' own problems would make them look unconnected
		b.checkTypes(eqs)
		if b.connected(eqs) {
			steps = b.steps(eqs, kinds, &cfg.Equalities)
		} else {
			b.errorf(&cfg.Equalities, "the equalities do not connect every input of %s (%s)", ctx.Describe(), strings.Join(b.names, ", ")).
				Detail = "every input must be joined to the others by an equality"
		}
	}
	if !b.ok || !ok {
		return nil
	}
	p := b.plan(steps, eqs, outs)
	if p == nil {
		return nil
	}
	ctx.Output(component.Main, p.Out)
	return p
}

// plan makes the Plan of checked steps, or nil when the windowing in effect cannot join.
func (b *builder) plan(steps []step, eqs [][]member, outs []output) *Plan {
	p := &Plan{who: b.ctx.Describe(), n: len(b.names), steps: steps}
	p.keys, p.loose = b.sharedKey(eqs)
	pad := nullable(steps, p.n)
	fields := make([]schemas.Field, len(outs))
	for i, name := range unique(outs) {
		f := b.fieldOf(outs[i].from)
		fields[i] = schemas.Field{Name: name, Type: f.Type, Nullable: f.Nullable || pad[outs[i].from.input]}
		p.proj = append(p.proj, outs[i].from)
	}
	p.Out = schemas.New(fields...)
	if !b.checkWindowing(window.InEffect(b.ctx), len(p.loose) > 0) {
		return nil
	}
	return p
}

// Field is field Index of input Input of a join built by NewPlan.
type Field struct{ Input, Index int }

// Step joins one input to the inputs before it (for NewPlan): Kind is inner, left, right or
// outer, and each equality of On pairs a field of an input before it with a field of it.
type Step struct {
	Kind string
	On   [][2]Field
}

// NewPlan returns the Plan of a join written as code rather than as a Join config
// (transforms/sql's JOIN ... ON): ins, named names, joined input after input, input i by
// steps[i-1]; the output is every field of every input in order, named as Join names them.
// The caller checked the equalities' inputs and types; NewPlan reports through ctx only
// what the windowing in effect cannot join (a stream in the global window), and then returns
// nil. Records are added with the index of ins as the input number.
func NewPlan(ctx *component.Context, names []string, ins []*schemas.Schema, steps []Step) *Plan {
	b := &builder{ctx: ctx, names: names, ins: ins, ok: true}
	var eqs [][]member
	kinds := make([]kind, len(steps))
	for i, s := range steps {
		kinds[i] = kindNames[s.Kind]
		for _, on := range s.On {
			eqs = append(eqs, []member{{col: col{on[0].Input, on[0].Index}}, {col: col{on[1].Input, on[1].Index}}})
		}
	}
	var outs []output
	for i, in := range ins {
		for f, fd := range in.Fields {
			outs = append(outs, output{name: fd.Name, from: col{i, f}})
		}
	}
	joined := b.steps(eqs, kinds, nil)
	if !b.ok {
		return nil
	}
	return b.plan(joined, eqs, outs)
}

// checkInputs requires two or more inputs, named as a mapping, each once.
func (b *builder) checkInputs() bool {
	named := len(b.names) >= 2
	seen := map[string]bool{}
	for _, in := range b.ctx.Inputs {
		named = named && in.Named && !seen[in.Name]
		seen[in.Name] = true
	}
	if !named {
		b.errorf(nil, "%s joins two or more inputs given as a mapping of names, each naming one transform, e.g. input: {%s}", b.ctx.Describe(), example(b.names)).
			Detail = "the names are what equalities and fields refer to"
	}
	return named
}

func example(names []string) string {
	if len(names) < 2 || names[0] == names[1] {
		return "left: orders, right: customers"
	}
	return "a: " + names[0] + ", b: " + names[1]
}

// checkWindowing refuses what would never fire or cannot be grouped: the global window over
// a stream (Beam refuses it too), and sessions without a key all inputs share.
func (b *builder) checkWindowing(spec *window.Spec, shared bool) bool {
	if spec.Type == "global" {
		for _, in := range b.ctx.Inputs {
			if in.Unbounded {
				b.errorf(nil, "%s reads a stream (input %q) in the global window, which closes only at the end of input: it would never join anything", b.ctx.Describe(), in.Name).
					Detail = "give it a window, e.g. windowing: {type: fixed, size: 1m}, as Beam requires of a join over an unbounded input"
				return false
			}
		}
	}
	if spec.Type == "sessions" && !shared {
		b.errorf(nil, "%s in sessions windows needs a field that is equal across all inputs: sessions are merged per join key", b.ctx.Describe()).
			Detail = "join every input on one field (equalities: id), or use fixed or sliding windows"
		return false
	}
	return true
}
