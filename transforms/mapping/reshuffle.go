package mapping

import (
	"context"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// ReshuffleConfig is Beam's Reshuffle config: num_buckets is accepted and has no effect.
type ReshuffleConfig struct {
	NumBuckets *int `yaml:"num_buckets" doc:"Beam's bucket count for redistributing; sluice accepts and ignores it (see the transform's description)."`
}

func init() {
	component.RegisterTransform("Reshuffle",
		"Passes its rows on unchanged. Beam's Reshuffle breaks fusion and redistributes work across workers; "+
			"in sluice every lane already runs the whole pipeline and partitions are spread over lanes and copies, so there is nothing to redistribute.",
		component.Inputs{Min: 1, Max: 1}, buildReshuffle)
}

func buildReshuffle(ctx *component.Context, _ *ReshuffleConfig) (component.Transform, error) {
	ctx.Output(component.Main, ctx.Input())
	return reshuffle{}, nil
}

type reshuffle struct{}

func (reshuffle) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	return emit(component.Main, in)
}
