package runner

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// exprCompiler gives connectors expr-lang expressions through component.Expressions.
type exprCompiler struct {
	lines []string // the pipeline file, to place errors inside block scalars
}

func (c exprCompiler) Compile(e component.Expr, in *schemas.Schema, language string) (component.RowFunc, schemas.Type, error) {
	if err := expr.CheckLanguage(language); err != nil {
		return nil, schemas.Type{}, err
	}
	p, err := expr.Compile(e, in, expr.Options{Language: language, Lines: c.lines})
	if err != nil {
		return nil, schemas.Type{}, err
	}
	ev := expr.NewEvaluator(in, p)
	return func(row schemas.Row) (any, error) {
		s := ev.Scope()
		defer s.Release()
		s.Bind(row)
		return s.Eval(0)
	}, p.Type(), nil
}
