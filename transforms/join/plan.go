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
	p := &Plan{who: ctx.Describe(), n: len(b.names), steps: steps}
	p.keys, p.loose = b.sharedKey(eqs)
	pad := nullable(steps, p.n)
	fields := make([]schemas.Field, len(outs))
	for i, name := range unique(outs) {
		f := b.fieldOf(outs[i].from)
		fields[i] = schemas.Field{Name: name, Type: f.Type, Nullable: f.Nullable || pad[outs[i].from.input]}
		p.proj = append(p.proj, outs[i].from)
	}
	p.Out = schemas.New(fields...)
	if !b.checkWindowing(window.InEffect(ctx), len(p.loose) > 0) {
		return nil
	}
	ctx.Output(component.Main, p.Out)
	return p
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
