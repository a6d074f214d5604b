package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The sample pipelines of docs/generator.md are valid.
func TestGeneratorDocsPipelines(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "generator.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(pipeline:.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no sample pipeline in docs/generator.md")
	}
	for i, b := range blocks {
		f := filepath.Join(t.TempDir(), fmt.Sprintf("sample%d.yaml", i+1))
		writeFile(t, f, string(b[1]))
		if code, out, errOut := sluice(t, "validate", f); code != exitOK {
			t.Errorf("docs/generator.md sample %d: exit %d\n%s%s\n%s", i+1, code, out, errOut, b[1])
		}
	}
}
