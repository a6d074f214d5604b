package yamlfmt

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFormat checks that Format never panics and never refuses a file it could parse: a
// refusal means that the printer changed a meaning or lost a comment, which is a bug.
// go test ./internal/yamlfmt -run '^$' -fuzz FuzzFormat -fuzztime 2m
func FuzzFormat(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.yaml")
	for _, path := range files {
		if src, err := os.ReadFile(path); err == nil {
			f.Add(src)
		}
	}
	for _, s := range []string{"a: >\n  x\n    more\n  y\n", "- - a\n  - b\n- c: 1\n  # d\n", "k: {a: [1, # c\n  2]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := Format("f.yaml", src)
		if errors.Is(err, ErrRefused) {
			t.Fatalf("refused %q: %v", src, err)
		}
		if err != nil {
			return
		}
		again, err := Format("f.yaml", out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not stable: %q -> %q -> %q (%v)", src, out, again, err)
		}
	})
}
