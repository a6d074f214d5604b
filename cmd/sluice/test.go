package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
	"github.com/sluicehq/sluice/tools/pipelinetest"
)

// testTimeout bounds one test: a source a test reads for real (allowed_sources) must end.
const testTimeout = 2 * time.Minute

// testCmd runs the tests: of pipeline files, as Beam YAML's tests run (docs/testing.md).
func testCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	suite := fs.String("suite", "", "a file whose tests: list runs against each pipeline too (Beam's --test_suite)")
	tf := addTemplateFlags(fs)
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: sluice test PIPELINE.yaml... [--suite TESTS.yaml] "+paramsUsage)
		return exitUsage
	}
	code := exitOK
	for _, path := range pos {
		if s, err := beamSuite(path); s != nil || err != nil {
			if !runSuite(path, s, err, tf, stdout, stderr) {
				code = exitInvalid
			}
			continue
		}
		if !runTests(path, *suite, tf, stdout, stderr) {
			code = exitInvalid
		}
	}
	return code
}

// runTests runs the tests of one pipeline and reports whether all passed.
func runTests(path, suite string, tf *templateFlags, stdout, stderr io.Writer) bool {
	src, err := readPipeline(path)
	if err != nil {
		report(stderr, err)
		return false
	}
	path = sourceName(path)
	tests, err := pipelinetest.Read(path, src)
	if err != nil {
		report(stderr, err)
		return false
	}
	if suite != "" {
		more, err := readSuite(suite)
		if err != nil {
			report(stderr, err)
			return false
		}
		tests = append(tests, more...)
	}
	if len(tests) == 0 {
		fmt.Fprintf(stderr, "%s: no tests: add a tests: list (docs/testing.md)\n", path)
		return false
	}
	failed := 0
	for _, t := range tests {
		if msg := runTest(path, src, t, tf); msg != "" {
			failed++
			fmt.Fprintf(stdout, "FAIL %s (%s)\n%s\n", t.Name, t.Pos, indent(shown.Mask(msg)))
			continue
		}
		fmt.Fprintf(stdout, "ok   %s\n", t.Name)
	}
	fmt.Fprintf(stdout, "%s: %d passed, %d failed\n", path, len(tests)-failed, failed)
	return failed == 0
}

// runTest loads the pipeline with the test's parameters and runs the test; it returns why the
// test failed, or "".
func runTest(path string, src []byte, t *pipelinetest.Test, tf *templateFlags) string {
	o := tf.opts
	o.Source = src
	o.Params = append(append([]templates.Param{}, o.Params...), t.Params...)
	p, err := runner.LoadWith(path, o)
	if p != nil {
		shown.Merge(p.Secrets)
	}
	if err != nil {
		return "the pipeline is invalid with this test's parameters:\n" + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := pipelinetest.Run(ctx, p, t)
	if err != nil {
		return err.Error()
	}
	return strings.Join(res.Failures, "\n")
}

func readSuite(path string) ([]*pipelinetest.Test, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--suite: %w", err)
	}
	tests, err := pipelinetest.Read(path, src)
	if err == nil && len(tests) == 0 {
		err = fmt.Errorf("--suite %s: no tests: list in it", path)
	}
	return tests, err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// beamSuite reads path when it is a file in Beam's test format (pipelines:, fixtures:), and
// returns nil, nil when it is not.
func beamSuite(path string) (*pipelinetest.Suite, error) {
	src, err := readPipeline(path)
	if err != nil || !pipelinetest.IsSuite(src) {
		return nil, nil // not a suite: the pipeline's own loading reports what is wrong
	}
	return pipelinetest.ReadSuite(sourceName(path), src)
}

// validateSuite validates every pipeline of a Beam test file and reports whether all are valid.
func validateSuite(path string, s *pipelinetest.Suite, err error, tf *templateFlags, stdout, stderr io.Writer) bool {
	if err != nil {
		report(stderr, err)
		return false
	}
	plans, err := s.Validate(tf.opts)
	for _, p := range plans {
		shown.Merge(p.Secrets)
		for _, w := range p.Warnings {
			fmt.Fprintf(stderr, "%s: warning: %s\n", w.Pos, shown.Mask(w.Summary))
		}
	}
	if err != nil {
		report(stderr, err)
		return false
	}
	fmt.Fprintf(stdout, "%s: valid (%d pipelines)\n", sourceName(path), len(s.Pipelines))
	return true
}

// runSuite runs the pipelines of a Beam test file in order and reports whether all passed.
func runSuite(path string, s *pipelinetest.Suite, err error, tf *templateFlags, stdout, stderr io.Writer) bool {
	if err != nil {
		report(stderr, err)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout*time.Duration(len(s.Pipelines)))
	defer cancel()
	results, err := s.Run(ctx, tf.opts)
	if err != nil {
		report(stderr, err)
		return false
	}
	failed := 0
	for i, r := range results {
		if r.Err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL pipeline %d (%s)\n%s\n", i+1, r.Pipeline.Pos, indent(shown.Mask(r.Err.Error())))
			continue
		}
		fmt.Fprintf(stdout, "ok   pipeline %d (%s)\n", i+1, r.Pipeline.Pos)
	}
	skipped := len(s.Pipelines) - len(results)
	fmt.Fprintf(stdout, "%s: %d passed, %d failed, %d not run\n", sourceName(path), len(results)-failed, failed, skipped)
	return failed == 0 && skipped == 0
}
