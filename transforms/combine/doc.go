// Package combine holds Beam YAML's Combine and sluice's GroupByKey: the combine functions
// (sum, count, min, max, mean, all, any, group, concat, top, latest, sample, and a Python
// function applied pairwise; by sluice's names or Beam's Python paths) as accumulators that
// add, merge and encode themselves, the keyed window State that a runner feeds with records and fires with
// watermarks, and the config decoding that turns a Combine or GroupByKey into a Plan.
//
// The package does no I/O and starts no goroutines: the runner drives a State (see
// docs/windows.md, "Runner integration").
package combine
