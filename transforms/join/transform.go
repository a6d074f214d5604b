package join

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/transforms/combine"
)

func init() {
	component.RegisterTransform("Join",
		"Joins two or more named inputs on equal fields (inner, left, right, outer), per window; Beam's output fields, or those of fields:.",
		component.Inputs{Min: 1, Max: -1}, func(ctx *component.Context, cfg *Config) (component.Transform, error) {
			p := Build(ctx, cfg)
			if p == nil {
				return nil, nil
			}
			return combine.NewStateful(ctx, p), nil
		})
}
