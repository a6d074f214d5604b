package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

const testFile = "pipeline.yaml"

// env places the components the tests build in testFile.
var env = componenttest.Env{File: testFile}

// mustBuild builds the component that the YAML snippet (a transform mapping with type and
// config) describes, as the runner does, with the given input schemas. It must have no config
// errors.
func mustBuild(t *testing.T, src string, inputs ...*schemas.Schema) (any, *component.Context) {
	t.Helper()
	b := env.Build(t, "", src, inputs...)
	if err := b.Err(); err != nil || b.Component == nil {
		t.Fatalf("build: %v", err)
	}
	return b.Component, b.Context
}

// writeFile writes content to dir/name, creating directories.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll opens src at from, reads until io.EOF and decodes every batch. It returns what
// Decode emitted, or the first error of Read or Decode, and the final offsets.
func readAll(t *testing.T, src component.Source, from schemas.Offsets) (componenttest.Emitted, schemas.Offsets, error) {
	t.Helper()
	ctx := context.Background()
	if err := src.Open(ctx, from); err != nil {
		return nil, nil, err
	}
	defer src.Close()
	out := componenttest.Emitted{}
	err := componenttest.ReadAll(ctx, src, out.Emit)
	return out, src.Offsets(), err
}

// lines returns the "line" values of ReadFromText rows.
func lines(rows []schemas.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0].(string)
	}
	return out
}

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
