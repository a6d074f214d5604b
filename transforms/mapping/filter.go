package mapping

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// FilterConfig is the config of Filter.
type FilterConfig struct {
	Keep          yaml.Node                `yaml:"keep" required:"true" doc:"Boolean expression (or {expression: ...}); a record is kept only when it is true."`
	Language      string                   `yaml:"language" doc:"Expression language: generic (default, expr-lang), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records whose expression fails or is not a boolean to this output instead of stopping."`
}

func init() {
	component.RegisterTransform("Filter", "Keeps the records for which an expression is true.",
		component.Inputs{Min: 1, Max: 1}, buildFilter)
}

type filter struct {
	who    string
	ev     *expr.Evaluator
	errors *component.ErrorOutput
}

func buildFilter(ctx *component.Context, cfg *FilterConfig) (component.Transform, error) {
	in := ctx.Input()
	p := compileOne(ctx, &cfg.Keep, cfg.Language, schemas.Bool, "keep", "be a boolean expression")
	if p == nil {
		return nil, nil
	}
	f := &filter{who: ctx.Describe(), ev: expr.NewEvaluator(in, p)}
	f.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	ctx.Output(component.Main, in)
	return f, nil
}

func (f *filter) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out := outBatch(in.Schema, in, len(in.Rows))
	var errs *schemas.Batch
	s := f.ev.Scope()
	defer s.Release()
	for i, row := range in.Rows {
		s.Bind(row)
		v, err := s.Eval(0)
		if err == nil {
			keep, isBool := v.(bool)
			if isBool {
				if keep {
					add(out, in, i, row)
				}
				continue
			}
			err = fmt.Errorf("keep returned %s, not a boolean", schemas.Describe(v))
		}
		var stop error
		if errs, stop = failure(f.errors, errs, in, i, f.who, err); stop != nil {
			return stop
		}
	}
	if len(out.Rows) == len(in.Rows) {
		out = in // all kept: pass the read-only batch on as it is
	}
	if err := emitRows(emit, component.Main, out); err != nil {
		return err
	}
	return f.errors.Emit(errs, emit)
}
