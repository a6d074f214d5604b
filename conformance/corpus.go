// Package conformance runs corpora of pipelines written in Beam's test convention: each file
// is a pipeline (typically Create -> transforms -> LogForTesting) ending in a comment block
//
//	# Expected:
//	#  Row(word='a', count=1)
//
// listing the rows its LogForTesting transforms print, in any order, as Beam's
// examples_test.py compares them; or a block
//
//	# Expected error:
//	#  14:30: ZeroDivisionError
//
// whose lines must all appear in the error that loading or running the pipeline ends with.
// A file in Beam's own test format (a pipelines: list, fixtures:, AssertEqual transforms;
// tools/pipelinetest.Suite) runs as `sluice test` runs it: it passes when every pipeline
// does, or, with an "# Expected error:" block, when one fails with that error.
// The corpora live in testdata/beam/<topic>/ (python/, and later io/, join/ ...): Files
// finds every pipeline under a root, so a new topic is a new folder.
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/tools/pipelinetest"
)

// Case is one pipeline file of a corpus with what it must give.
type Case struct {
	Path string
	// Rows are the expected rows, canonical (see Canonical); nil when the file expects an error.
	Rows []string
	// Errors are texts the pipeline's error must contain; nil when it expects rows.
	Errors []string
	// Suite is set for a file in Beam's test format: its AssertEqual transforms are its
	// expectations.
	Suite *pipelinetest.Suite
}

// Files returns the pipeline files (*.yaml) under root, sorted.
func Files(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// DocPipelines returns the fenced yaml blocks of a Markdown document that hold an
// "# Expected:" or "# Expected error:" block: the examples of the docs, to run as cases.
func DocPipelines(md []byte) []string {
	var out []string
	var block []string
	in := false
	for _, line := range strings.Split(string(md), "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```yaml":
			in, block = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			text := strings.Join(block, "\n") + "\n"
			if strings.Contains(text, "\n# Expected") {
				out = append(out, text)
			}
		case in:
			block = append(block, line)
		}
	}
	return out
}

// Read reads a case's expectations from the comment block at the end of its file.
func Read(path string) (*Case, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the case: %w", err)
	}
	c := &Case{Path: path}
	block := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "# Expected:":
			block, c.Rows = "rows", []string{}
		case text == "# Expected error:":
			block, c.Errors = "error", []string{}
		case block != "" && strings.HasPrefix(text, "#"):
			item := strings.TrimSpace(strings.TrimPrefix(text, "#"))
			if item == "" {
				continue
			}
			if block == "error" {
				c.Errors = append(c.Errors, item)
				continue
			}
			v, err := ParseRepr(item)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: expected row: %w", path, line, err)
			}
			c.Rows = append(c.Rows, Canonical(v))
		case block != "" && text != "":
			block = ""
		}
	}
	if pipelinetest.IsSuite(src) {
		if c.Suite, err = pipelinetest.ReadSuite(path, src); err != nil {
			return nil, err
		}
		return c, nil
	}
	if c.Rows == nil && c.Errors == nil {
		return nil, fmt.Errorf("%s: no \"# Expected:\" or \"# Expected error:\" block", path)
	}
	return c, nil
}

// Check runs the case and returns what differs from its expectations, nil when nothing.
func (c *Case) Check(ctx context.Context) error {
	if c.Suite != nil {
		return c.checkSuite(ctx)
	}
	rows, err := Run(ctx, c.Path)
	if c.Errors != nil {
		if err == nil {
			return fmt.Errorf("the pipeline succeeded (%d rows), want an error with %q", len(rows), c.Errors)
		}
		for _, want := range c.Errors {
			if !strings.Contains(err.Error(), want) {
				return fmt.Errorf("error %q lacks %q", err, want)
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	got := make([]string, len(rows))
	for i, r := range rows {
		var v any
		if err := json.Unmarshal([]byte(r), &v); err != nil {
			return fmt.Errorf("LogForTesting printed %q: %w", r, err)
		}
		got[i] = Canonical(v)
	}
	want := slices.Clone(c.Rows)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("rows differ:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	return nil
}

// checkSuite runs the pipelines of a file in Beam's test format.
func (c *Case) checkSuite(ctx context.Context) error {
	results, err := c.Suite.Run(ctx, runner.LoadOptions{})
	for i, r := range results {
		if r.Err != nil {
			err = fmt.Errorf("pipeline %d (%s): %w", i+1, r.Pipeline.Pos, r.Err)
		}
	}
	switch {
	case c.Errors == nil:
		return err
	case err == nil:
		return fmt.Errorf("every pipeline passed, want an error with %q", c.Errors)
	}
	for _, want := range c.Errors {
		if !strings.Contains(err.Error(), want) {
			return fmt.Errorf("error %q lacks %q", err, want)
		}
	}
	return nil
}

// logMu serialises runs: LogForTesting logs through slog's default logger, which Run
// replaces while a pipeline runs.
var logMu sync.Mutex

// Run loads and runs the pipeline at path to its end and returns the rows its
// LogForTesting transforms printed (as JSON).
func Run(ctx context.Context, path string) ([]string, error) {
	logMu.Lock()
	defer logMu.Unlock()
	p, err := runner.Load(path)
	if err != nil {
		return nil, err
	}
	h := &rowCapture{}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	defer slog.SetDefault(prev)
	if _, err := runner.Execute(ctx, p, runner.RunConfig{}); err != nil {
		return h.lines(), err
	}
	return h.lines(), nil
}

// rowCapture is a slog handler keeping the messages LogForTesting logs (those with a
// transform attribute).
type rowCapture struct {
	mu   sync.Mutex
	rows []string
}

func (h *rowCapture) Enabled(context.Context, slog.Level) bool { return true }

func (h *rowCapture) Handle(_ context.Context, r slog.Record) error {
	fromTransform := false
	r.Attrs(func(a slog.Attr) bool {
		fromTransform = fromTransform || a.Key == "transform"
		return !fromTransform
	})
	if fromTransform && strings.HasPrefix(r.Message, "{") {
		h.mu.Lock()
		h.rows = append(h.rows, r.Message)
		h.mu.Unlock()
	}
	return nil
}

func (h *rowCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *rowCapture) WithGroup(string) slog.Handler      { return h }

func (h *rowCapture) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.rows)
}

// Canonical renders a row value comparably: maps with sorted keys, every number a float.
func Canonical(v any) string {
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}
