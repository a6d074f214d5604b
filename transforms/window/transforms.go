package window

import (
	"context"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

func init() {
	component.RegisterTransform("WindowInto",
		"Sets the windows of the records for the groupings downstream (Combine, GroupByKey) from its `windowing:`; the records pass unchanged.",
		component.Inputs{Min: 1, Max: 1}, buildWindowInto)
	component.RegisterTransform("ExtractWindowingInfo",
		"Adds a record's windowing properties as fields: timestamp, window_start, window_end, window_string, window_type, pane_info.",
		component.Inputs{Min: 1, Max: 1}, buildExtractTransform)
}

// WindowIntoConfig is WindowInto's config. Its windowing is the transform's `windowing:` key;
// Beam's spelling, `config: {windowing: ...}`, means the same, and the runner moves it there
// before the transform is built (so Windowing is never set here: it documents the key).
type WindowIntoConfig struct {
	Windowing *yaml.Node `yaml:"windowing" doc:"The windowing, as Beam spells it: the same as the transform's windowing: key, e.g. {type: fixed, size: 60s}."`
}

// windowInto passes records on; the plan gives its windowing to the transforms downstream.
type windowInto struct{}

func buildWindowInto(ctx *component.Context, _ *WindowIntoConfig) (component.Transform, error) {
	if ctx.Windowing == nil {
		ctx.Errorf(ctx.Pos, "%s needs a windowing: key, e.g. windowing: {type: fixed, size: 60s} (or config: {windowing: ...})", ctx.Describe())
		return nil, nil
	}
	ctx.Output(component.Main, ctx.Input())
	return windowInto{}, nil
}

func (windowInto) Process(_ context.Context, _ int, b *schemas.Batch, emit component.Emit) error {
	return emit(component.Main, b)
}

// InEffect returns the windowing in effect for the transform being built: ctx.Windowing,
// which the runner decoded (Decode), or the global window when there is none.
func InEffect(ctx *component.Context) *Spec {
	if s, ok := ctx.Windowing.(*Spec); ok && s != nil {
		return s
	}
	return &Spec{Type: "global"}
}

// extractTransform is ExtractWindowingInfo: the windows of a grouping's result are its own
// (Batch.Windows); those of other records are what the windowing in effect assigns to their
// event time.
type extractTransform struct {
	x  *Extract
	fn Fn
}

func buildExtractTransform(ctx *component.Context, cfg *ExtractConfig) (component.Transform, error) {
	x, err := BuildExtract(ctx, cfg)
	if x == nil || err != nil {
		return nil, err
	}
	return &extractTransform{x: x, fn: InEffect(ctx).Fn()}, nil
}

func (e *extractTransform) Process(_ context.Context, _ int, b *schemas.Batch, emit component.Emit) error {
	out := &schemas.Batch{Schema: e.x.Out}
	var ws []Window
	for i, row := range b.Rows {
		var ts int64
		if i < len(b.Time) {
			ts = Nanos(b.Time[i])
		}
		pane := NoFiring
		if i < len(b.Pos) && strings.HasPrefix(b.Pos[i].Source, "window:") {
			pane = OnTime // a grouping's result
		}
		if i < len(b.Windows) { // a grouping's result: its own window (a merged session)
			ws = append(ws[:0], Window{Start: b.Windows[i][0], End: b.Windows[i][1]})
		} else {
			ws = e.fn.Assign(ts, ws[:0])
		}
		for _, w := range ws {
			out.Rows = append(out.Rows, e.x.Row(row, ts, w, pane))
			if i < len(b.Pos) {
				out.Pos = append(out.Pos, b.Pos[i])
			}
			if i < len(b.Time) {
				out.Time = append(out.Time, b.Time[i])
			}
		}
	}
	return emit(component.Main, out)
}
