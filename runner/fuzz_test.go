package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/runner"
)

// FuzzLoadStructure loads pipeline files offline (nothing is opened or created), seeded with
// the nested-structure corpus: the loader must report problems, never panic or loop.
// Run longer with: go test ./runner -run '^$' -fuzz FuzzLoadStructure -fuzztime 60s
func FuzzLoadStructure(f *testing.F) {
	files, _ := filepath.Glob("../testdata/beam/structure/*.yaml")
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := runner.LoadWith("fuzz.yaml", runner.LoadOptions{Source: src, Offline: true})
		if p == nil && err == nil {
			t.Fatal("no plan and no error")
		}
	})
}
