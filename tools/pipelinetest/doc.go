// Package pipelinetest runs the whole-pipeline tests of a file's `tests:` list, as Beam YAML
// writes them (docs/testing.md): `sluice test`. It reads the list (Read) and runs each test
// on a validated plan in this process, with no services (Run): mocked transforms emit the
// test's elements, sinks never run, and what transforms receive or emit is compared with the
// expected elements. It drives the plan's built components through the runner's read-only
// view of the plan, not the runner's executor: a test is one pass, with no lanes, epochs or
// checkpoints.
//
// It also reads files in Beam's integration-test format (Suite: a `pipelines:` list and
// `fixtures:`), whose pipelines run for real, one after the other, through the runner's
// executor: their assertions are AssertEqual transforms, which fail the run.
package pipelinetest
