package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/sluicehq/sluice/connectors/all"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// TestBadPipelines holds the corpus of broken pipelines in testdata/bad: each must fail
// validation with exactly the listed problems, at the listed line and column.
func TestBadPipelines(t *testing.T) {
	files, err := filepath.Glob("../testdata/bad/*.yaml")
	if err != nil || len(files) < 30 {
		t.Fatalf("want at least 30 files in testdata/bad, found %d (%v)", len(files), err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			want, ok := badWant[name]
			if !ok {
				t.Fatalf("no expectation for %s in badWant", name)
			}
			got := problems(t, path)
			if !slices.Equal(got, want) {
				t.Errorf("%s:\ngot\n\t%s\nwant\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
	for name := range badWant {
		if _, err := os.Stat(filepath.Join("../testdata/bad", name)); err != nil {
			t.Errorf("badWant lists %s, which is not in testdata/bad", name)
		}
	}
}

// problems validates path and returns each problem as "line:col: summary".
func problems(t *testing.T, path string) []string {
	t.Helper()
	_, err := runner.Load(path)
	if err == nil {
		t.Fatalf("%s validated, but it is broken", path)
	}
	var list diag.List
	if !errors.As(err, &list) {
		t.Fatalf("%s: error is not a list of positioned problems: %v", path, err)
	}
	var out []string
	for _, d := range list {
		if d.File != path {
			t.Errorf("problem names file %q, want %q", d.File, path)
		}
		s := strings.TrimPrefix(d.Error(), path+":")
		s, _, _ = strings.Cut(s, "\n\thint:")
		if strings.Contains(s, "interface {}") || strings.Contains(s, "goroutine") {
			t.Errorf("problem shows Go internals: %s", s)
		}
		out = append(out, s)
	}
	return out
}

var badWant = map[string][]string{}
