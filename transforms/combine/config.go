package combine

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// CombineConfig is the config of Combine, as Beam YAML writes it.
type CombineConfig struct {
	GroupBy       yaml.Node                `yaml:"group_by" required:"true" doc:"Field or list of fields to group by; [] combines all records of a window into one."`
	Combine       yaml.Node                `yaml:"combine" required:"true" doc:"Output field to combine function: 'out: sum' (combines field out), 'out: {value: field or expression, fn: sum}', or fn as {type: sum}. Functions: sum, count, min, max, mean, all, any, group (to_list), concat, top, latest, sample, Beam's apache_beam.transforms.combiners paths, or a Python function (a, b) -> value."`
	Language      string                   `yaml:"language" doc:"Language of value expressions: generic (default), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"sluice adds: records that cannot be combined, and late records, go to this output instead of stopping the pipeline or being dropped."`
}

// GroupByKeyConfig is the config of GroupByKey (sluice adds it; Beam YAML groups with
// Combine and fn group).
type GroupByKeyConfig struct {
	Key           yaml.Node                `yaml:"key" required:"true" doc:"Expression or field whose value groups the records."`
	Values        yaml.Node                `yaml:"values" doc:"What is collected of each record: an expression or field, or a list of fields (a struct of them). Default: the whole record."`
	Language      string                   `yaml:"language" doc:"Language of the expressions: generic (default), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Records whose key or values fail, and late records, go to this output instead of stopping the pipeline or being dropped."`
}

// BuildCombine checks a Combine config against the input schema and returns its Plan. It
// has the signature of a component build function: problems are reported through ctx,
// and the result is nil when there were any.
func BuildCombine(ctx *component.Context, cfg *CombineConfig) (*Plan, error) {
	in := ctx.Input()
	opts, ok := expr.OptionsFor(ctx, cfg.Language)
	if !ok || in == nil {
		return nil, nil
	}
	p := &Plan{who: ctx.Describe()}
	var fields []schemas.Field
	names := map[string]bool{}
	for _, n := range groupByNodes(ctx, &cfg.GroupBy) {
		i, found := in.Index(n.Value)
		if !found {
			ctx.Errorf(ctx.At(n), "unknown field %q in group_by%s", n.Value, diag.DidYouMean(n.Value, in.Names()))
			ok = false
			continue
		}
		if names[n.Value] {
			ctx.Errorf(ctx.At(n), "field %q is listed twice in group_by", n.Value)
			ok = false
			continue
		}
		names[n.Value] = true
		p.keys = append(p.keys, i)
		fields = append(fields, in.Fields[i])
	}
	c := &cfg.Combine
	if c.Kind != yaml.MappingNode || len(c.Content) == 0 {
		ctx.Errorf(ctx.At(c), "combine must map output fields to combine functions, e.g. {total: {value: amount, fn: sum}}")
		return nil, nil
	}
	var progs, keys []*expr.Program
	for i := 0; i+1 < len(c.Content); i += 2 {
		dest := c.Content[i]
		spec, good := decodeAgg(ctx, dest, c.Content[i+1], in, opts)
		if !good {
			ok = false
			continue
		}
		if names[dest.Value] {
			ctx.Errorf(ctx.At(dest), "output field %q is also a group_by field or listed twice", dest.Value)
			ok = false
			continue
		}
		names[dest.Value] = true
		t, nullable := spec.agg.Out()
		fields = append(fields, schemas.Field{Name: dest.Value, Type: t, Nullable: nullable})
		p.Aggs = append(p.Aggs, spec.agg)
		progs = append(progs, spec.value)
		keys = append(keys, spec.key)
	}
	if !ok {
		return nil, nil
	}
	p.values = progs
	all := progs
	for j, k := range keys {
		if k != nil {
			if p.topKeys == nil {
				p.topKeys = make([]int, len(keys))
			}
			all = append(all, k)
			p.topKeys[j] = len(all) - 1
		}
	}
	p.ev = expr.NewEvaluator(in, all...)
	p.Out = schemas.New(fields...)
	ctx.Output(component.Main, p.Out)
	p.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	return p, nil
}

// groupByNodes returns the field names of group_by: one name or a list of them.
func groupByNodes(ctx *component.Context, n *yaml.Node) []*yaml.Node {
	switch n.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{n}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				ctx.Errorf(ctx.At(c), "group_by lists field names")
				continue
			}
			out = append(out, c)
		}
		return out
	}
	ctx.Errorf(ctx.At(n), "group_by must be a field name or a list of them")
	return nil
}

// aggForm is the long form of one combined output.
type aggForm struct {
	Value yaml.Node `yaml:"value" doc:"Field or expression whose values are combined; default: the output field's name."`
	Fn    yaml.Node `yaml:"fn" required:"true" doc:"Combine function: a name or Beam's Python path, {type: name, config: {...}}, or (language python) a function (a, b) -> value."`
}

// fnForm is the mapping form of a combine function.
type fnForm struct {
	Type   string    `yaml:"type" required:"true" doc:"Combine function name."`
	Config yaml.Node `yaml:"config" doc:"Settings of top (n, key, reverse) and sample (n); the others take none."`
}

// aggSpec is one decoded combined output: its agg, the program of its values and, for top
// with a key, the program of the key.
type aggSpec struct {
	agg        Agg
	value, key *expr.Program
}

// decodeAgg reads one combined output in any of Beam's three forms ('out: sum',
// '{value, fn: sum}', '{value, fn: {type: sum, config: {...}}}') and compiles its value.
func decodeAgg(ctx *component.Context, dest, n *yaml.Node, in *schemas.Schema, opts expr.Options) (aggSpec, bool) {
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: dest.Value, Line: dest.Line, Column: dest.Column}
	fnNode := n
	if n.Kind == yaml.MappingNode {
		var f aggForm
		if !ctx.Decode(n, &f, "combine "+dest.Value) {
			return aggSpec{}, false
		}
		if f.Value.Kind != 0 {
			value = &f.Value
		}
		fnNode = &f.Fn
	}
	choice, ok := decodeFn(ctx, fnNode, dest.Value, opts.Language)
	if !ok {
		return aggSpec{}, false
	}
	prog := expr.CompileAt(ctx, value, in, opts)
	if prog == nil {
		return aggSpec{}, false
	}
	agg := Agg{Fn: choice.fn, In: prog.Type(), Nullable: prog.Nullable()}
	key, ok := configure(ctx, &agg, choice, in, opts)
	if !ok {
		return aggSpec{}, false
	}
	if err := agg.Check(); err != nil {
		ctx.Errorf(ctx.At(choice.at), "combine %s: %v", dest.Value, err)
		return aggSpec{}, false
	}
	return aggSpec{agg: agg, value: prog, key: key}, true
}

// BuildGroupByKey checks a GroupByKey config against the input schema and returns its
// Plan, which emits {key, values} per key and window. Like BuildCombine it reports
// problems through ctx.
func BuildGroupByKey(ctx *component.Context, cfg *GroupByKeyConfig) (*Plan, error) {
	in := ctx.Input()
	opts, ok := expr.OptionsFor(ctx, cfg.Language)
	if !ok || in == nil {
		return nil, nil
	}
	key := expr.CompileAt(ctx, &cfg.Key, in, opts)
	p := &Plan{who: ctx.Describe(), keyExpr: true}
	var progs []*expr.Program
	var elem schemas.Type
	elemNullable := false
	switch v := &cfg.Values; v.Kind {
	case 0:
		p.project = allFields(in)
		elem = structOf(in, p.project)
	case yaml.SequenceNode:
		for _, c := range v.Content {
			i, found := in.Index(c.Value)
			if c.Kind != yaml.ScalarNode || !found {
				ctx.Errorf(ctx.At(c), "unknown field %q in values%s", c.Value, diag.DidYouMean(c.Value, in.Names()))
				ok = false
				continue
			}
			p.project = append(p.project, i)
		}
		elem = structOf(in, p.project)
	default:
		prog := expr.CompileAt(ctx, v, in, opts)
		if prog == nil {
			return nil, nil
		}
		progs = append(progs, prog)
		elem, elemNullable = prog.Type(), prog.Nullable()
	}
	if key == nil || !ok {
		return nil, nil
	}
	for _, f := range p.project {
		p.names = append(p.names, in.Fields[f].Name)
	}
	p.Aggs = []Agg{{Fn: Group, In: elem, Nullable: elemNullable}}
	p.values = progs
	p.ev = expr.NewEvaluator(in, append([]*expr.Program{key}, progs...)...)
	keyType := key.Type()
	p.Out = schemas.New(
		schemas.Field{Name: "key", Type: keyType, Nullable: key.Nullable()},
		schemas.Field{Name: "values", Type: schemas.Type{Kind: schemas.Array, Elem: &elem}})
	ctx.Output(component.Main, p.Out)
	p.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	return p, nil
}

// NewPlan returns the Plan of a Combine that another transform builds (transforms/sql): the
// rows of in are grouped by the fields keys, and aggs[j] combines the values of program
// values[j] (compiled against in). The output is the key fields, then one field per agg,
// named names[j].
func NewPlan(who string, in *schemas.Schema, keys []int, aggs []Agg, names []string, values []*expr.Program) *Plan {
	p := &Plan{who: who, keys: keys, Aggs: aggs, values: values, ev: expr.NewEvaluator(in, values...)}
	fields := make([]schemas.Field, 0, len(keys)+len(aggs))
	for _, k := range keys {
		fields = append(fields, in.Fields[k])
	}
	for j, a := range aggs {
		t, nullable := a.Out()
		fields = append(fields, schemas.Field{Name: names[j], Type: t, Nullable: nullable})
	}
	p.Out = schemas.New(fields...)
	return p
}

func allFields(in *schemas.Schema) []int {
	idx := make([]int, len(in.Fields))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// structOf is the type of a struct of the fields idx of in.
func structOf(in *schemas.Schema, idx []int) schemas.Type {
	fields := make([]schemas.Field, len(idx))
	for i, j := range idx {
		fields[i] = in.Fields[j]
	}
	return schemas.Type{Kind: schemas.Struct, Fields: fields}
}
