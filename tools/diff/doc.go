// Package diff is `sluice diff`: the semantic difference between two versions of a pipeline
// (transforms, schemas, sources and sinks, options) and the verdict whether the new one can
// resume from the old one's checkpoints (docs/upgrades.md). It reads both plans through the
// runner's read-only view of them and judges checkpoints with runner.CompareShapes, the check
// a run makes at its start, so that the verdict and the run agree.
package diff
