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
	Combine       yaml.Node                `yaml:"combine" required:"true" doc:"Output field to combine function: 'out: sum' (combines field out), 'out: {value: field or expression, fn: sum}', or fn as {type: sum}. Functions: sum, count, min, max, mean, all, any, group, concat."`
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
	var progs []*expr.Program
	for i := 0; i+1 < len(c.Content); i += 2 {
		dest := c.Content[i]
		agg, prog, good := decodeAgg(ctx, dest, c.Content[i+1], in, opts)
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
		t, nullable := agg.Out()
		fields = append(fields, schemas.Field{Name: dest.Value, Type: t, Nullable: nullable})
		p.Aggs = append(p.Aggs, agg)
		progs = append(progs, prog)
	}
	if !ok {
		return nil, nil
	}
	p.values = progs
	p.ev = expr.NewEvaluator(in, progs...)
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
	Fn    yaml.Node `yaml:"fn" required:"true" doc:"Combine function: a name, or {type: name}."`
}

// fnForm is the mapping form of a combine function.
type fnForm struct {
	Type   string    `yaml:"type" required:"true" doc:"Combine function name."`
	Config yaml.Node `yaml:"config" doc:"Settings of a custom combine function; the built-in ones take none."`
}

// decodeAgg reads one combined output in any of Beam's three forms ('out: sum',
// '{value, fn: sum}', '{value, fn: {type: sum}}') and compiles its value.
func decodeAgg(ctx *component.Context, dest, n *yaml.Node, in *schemas.Schema, opts expr.Options) (Agg, *expr.Program, bool) {
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: dest.Value, Line: dest.Line, Column: dest.Column}
	fnNode := n
	if n.Kind == yaml.MappingNode {
		var f aggForm
		if !ctx.Decode(n, &f, "combine "+dest.Value) {
			return Agg{}, nil, false
		}
		if f.Value.Kind != 0 {
			value = &f.Value
		}
		fnNode = &f.Fn
	}
	name, at := fnNode.Value, fnNode
	switch fnNode.Kind {
	case yaml.MappingNode:
		var f fnForm
		if !ctx.Decode(fnNode, &f, "combine "+dest.Value+" fn") {
			return Agg{}, nil, false
		}
		name, at = f.Type, component.MappingValue(fnNode, "type")
		if f.Config.Kind != 0 {
			if _, builtin := ParseFn(name); builtin {
				ctx.Errorf(ctx.At(&f.Config), "combine function %s takes no config", name)
				return Agg{}, nil, false
			}
		}
	case yaml.ScalarNode:
	default:
		ctx.Errorf(ctx.At(fnNode), "fn must be a combine function name or {type: name}")
		return Agg{}, nil, false
	}
	fn, known := ParseFn(name)
	if !known {
		ctx.Errorf(ctx.At(at), "unknown combine function %q%s", name, diag.DidYouMean(name, FnNames())).
			Detail = "sluice's combine functions are sum, count, min, max, mean, all, any, group and concat"
		return Agg{}, nil, false
	}
	prog := expr.CompileAt(ctx, value, in, opts)
	if prog == nil {
		return Agg{}, nil, false
	}
	agg := Agg{Fn: fn, In: prog.Type(), Nullable: prog.Nullable()}
	if err := agg.Check(); err != nil {
		ctx.Errorf(ctx.At(at), "combine %s: %v", dest.Value, err)
		return Agg{}, nil, false
	}
	return agg, prog, true
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
