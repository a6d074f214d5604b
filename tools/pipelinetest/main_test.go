package pipelinetest

import (
	// The tests' pipelines use the built-in components.
	_ "github.com/sluicehq/sluice/connectors/all"
	_ "github.com/sluicehq/sluice/transforms/all"
)
