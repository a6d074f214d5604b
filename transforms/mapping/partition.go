package mapping

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// PartitionConfig is the config of Partition.
type PartitionConfig struct {
	By            yaml.Node                `yaml:"by" required:"true" doc:"Expression (or field name) giving the name of the output each record goes to."`
	Outputs       []string                 `yaml:"outputs" required:"true" doc:"The outputs; each is an output tag of this transform."`
	UnknownOutput string                   `yaml:"unknown_output" doc:"Output for records whose value is not listed in outputs (or is null); without it such a record is an error."`
	Language      string                   `yaml:"language" doc:"Expression language: generic (default, expr-lang), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records that cannot be routed to this output instead of stopping."`
}

func init() {
	component.RegisterTransform("Partition", "Routes each record to one of several outputs by an expression.",
		component.Inputs{Min: 1, Max: 1}, buildPartition)
}

type partition struct {
	who     string
	tags    []string       // outputs, then unknown_output if it is not one of them
	index   map[string]int // output name -> position in tags
	unknown int            // position of unknown_output in tags, or -1
	ev      *expr.Evaluator
	errors  *component.ErrorOutput
}

func buildPartition(ctx *component.Context, cfg *PartitionConfig) (component.Transform, error) {
	in := ctx.Input()
	p := compileOne(ctx, &cfg.By, cfg.Language, schemas.String, "by", "give the name of an output (a string)")
	if p == nil {
		return nil, nil
	}
	t := &partition{who: ctx.Describe(), index: map[string]int{}, unknown: -1, ev: expr.NewEvaluator(in, p)}
	if len(cfg.Outputs) == 0 {
		ctx.Errorf(ctx.KeyPos("outputs"), "outputs must name at least one output")
	}
	errTag := ""
	if cfg.ErrorHandling != nil {
		errTag = cfg.ErrorHandling.Output
	}
	items := component.MappingValue(ctx.Config, "outputs")
	for i, name := range cfg.Outputs {
		pos := ctx.KeyPos("outputs")
		if items != nil && items.Kind == yaml.SequenceNode && i < len(items.Content) {
			pos = ctx.At(items.Content[i])
		}
		switch _, dup := t.index[name]; {
		case name == "":
			ctx.Errorf(pos, "an output name must not be empty")
		case dup:
			ctx.Errorf(pos, "output %q is listed twice", name)
		case name == errTag:
			ctx.Errorf(pos, "output %q is also the error_handling output", name)
		default:
			t.index[name] = len(t.tags)
			t.tags = append(t.tags, name)
		}
	}
	if u := cfg.UnknownOutput; u != "" {
		if u == errTag {
			ctx.Errorf(ctx.KeyPos("unknown_output"), "unknown_output %q is also the error_handling output", u)
		}
		if j, listed := t.index[u]; listed {
			t.unknown = j
		} else {
			t.unknown = len(t.tags)
			t.tags = append(t.tags, u)
		}
	}
	for _, tag := range t.tags {
		ctx.Output(tag, in)
	}
	t.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	return t, nil
}

func (t *partition) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	outs := make([]*schemas.Batch, len(t.tags))
	var errs *schemas.Batch
	s := t.ev.Scope()
	defer s.Release()
	for i, row := range in.Rows {
		s.Bind(row)
		j, err := t.route(s)
		if err != nil {
			var stop error
			if errs, stop = failure(t.errors, errs, in, i, t.who, err); stop != nil {
				return stop
			}
			continue
		}
		if outs[j] == nil {
			outs[j] = outBatch(in.Schema, in, len(in.Rows)-i)
		}
		add(outs[j], in, i, row)
	}
	for j, b := range outs {
		if err := emitRows(emit, t.tags[j], b); err != nil {
			return err
		}
	}
	return t.errors.Emit(errs, emit)
}

// route returns the position in tags of the output for the bound row.
func (t *partition) route(s *expr.Scope) (int, error) {
	v, err := s.Eval(0)
	if err != nil {
		return 0, err
	}
	name, isString := v.(string)
	if j, ok := t.index[name]; ok && isString {
		return j, nil
	}
	if t.unknown >= 0 && (isString || v == nil) {
		return t.unknown, nil
	}
	if !isString && v != nil {
		return 0, fmt.Errorf("by returned %s, not the name of an output", schemas.Describe(v))
	}
	return 0, fmt.Errorf("by returned %s, which is not one of the outputs %q and there is no unknown_output", schemas.Describe(v), t.tags)
}
