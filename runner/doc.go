// Package runner turns a pipeline file into a Plan (load, resolve references, build every
// component against its input schemas, all problems reported at once with positions) and
// executes a Plan: a goroutine DAG per lane, epochs cut by in-band barriers, and each sink's
// commit of its data together with its checkpoint. See docs/architecture.md.
//
// The commands that use a plan without running it (sluice diff, test, status) live in
// tools/; they read a plan through its exported fields and the accessors of view.go.
package runner
