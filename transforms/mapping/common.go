package mapping

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// compileOne compiles the transform's single expression at n and checks that its result is
// of kind want (or any, checked per row); otherwise it reports "<key> must <purpose>, but
// <expr> is <type>". The result is nil when there were problems.
func compileOne(ctx *component.Context, n *yaml.Node, lang string, want schemas.Kind, key, purpose string) *expr.Program {
	opts, ok := expr.OptionsFor(ctx, lang)
	opts.Truth = want == schemas.Bool && expr.Truthy(lang)
	p := expr.CompileAt(ctx, n, ctx.Input(), opts)
	if !ok || p == nil {
		return nil
	}
	if k := p.Type().Kind; k != want && k != schemas.Any {
		ctx.Errorf(ctx.At(n), "%s must %s, but %q is %s", key, purpose, p.Text(), p.Type().Articled())
		return nil
	}
	return p
}

// outBatch starts an output batch for up to n rows derived from in.
func outBatch(s *schemas.Schema, in *schemas.Batch, n int) *schemas.Batch {
	b := &schemas.Batch{Schema: s, Rows: make([]schemas.Row, 0, n)}
	if in.Pos != nil {
		b.Pos = make([]schemas.Position, 0, n)
	}
	if in.Time != nil {
		b.Time = make([]time.Time, 0, n)
	}
	return b
}

// add appends row, derived from row i of in, with that row's position and time.
func add(b *schemas.Batch, in *schemas.Batch, i int, row schemas.Row) {
	b.Rows = append(b.Rows, row)
	if b.Pos != nil && i < len(in.Pos) {
		b.Pos = append(b.Pos, in.Pos[i])
	}
	if b.Time != nil && i < len(in.Time) {
		b.Time = append(b.Time, in.Time[i])
	}
}

// emitRows sends b to tag unless it is empty.
func emitRows(emit component.Emit, tag string, b *schemas.Batch) error {
	if b == nil || len(b.Rows) == 0 {
		return nil
	}
	return emit(tag, b)
}

// failure records that row i of in failed: to the error output when there is one (errs
// grows), else as the *component.RowError the transform returns to stop the pipeline.
func failure(eo *component.ErrorOutput, errs *schemas.Batch, in *schemas.Batch, i int, who string, err error) (*schemas.Batch, error) {
	return eo.Add(errs, in, i, fmt.Errorf("%s: %w", who, err))
}
