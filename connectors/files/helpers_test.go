package files

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

const testFile = "pipeline.yaml"

// build builds the component that the YAML snippet (a transform mapping with type and config)
// describes, as the runner does, with the given input schemas. It returns the component (nil
// on config errors), its context and the diagnostics.
func build(t *testing.T, src string, inputs ...*schemas.Schema) (any, *component.Context, diag.List) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	m := doc.Content[0]
	typ := component.MappingValue(m, "type").Value
	spec, ok := component.Lookup(typ)
	if !ok {
		t.Fatalf("%s is not registered", typ)
	}
	var diags diag.List
	ctx := &component.Context{
		Decoder: &component.Decoder{File: testFile, Lines: strings.Split(src, "\n"), Diags: &diags},
		Type:    typ, Name: typ, Pos: diag.At(testFile, m),
		Config: component.MappingValue(m, "config"),
	}
	for i, s := range inputs {
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: "in" + string(rune('0'+i)), Schema: s})
	}
	return spec.Build(ctx), ctx, diags
}

// mustBuild builds a component that must have no config errors.
func mustBuild(t *testing.T, src string, inputs ...*schemas.Schema) (any, *component.Context) {
	t.Helper()
	c, ctx, diags := build(t, src, inputs...)
	if err := diags.Err(); err != nil || c == nil {
		t.Fatalf("build: %v", err)
	}
	return c, ctx
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

// emitted collects what a source's Decode emits, per output tag.
type emitted map[string][]*schemas.Batch

func (e emitted) emit(tag string, b *schemas.Batch) error {
	e[tag] = append(e[tag], b)
	return nil
}

// rows returns the rows and positions emitted on tag.
func (e emitted) rows(tag string) ([]schemas.Row, []schemas.Position) {
	var rows []schemas.Row
	var pos []schemas.Position
	for _, b := range e[tag] {
		rows = append(rows, b.Rows...)
		pos = append(pos, b.Pos...)
	}
	return rows, pos
}

// readAll opens src at from, reads until io.EOF and decodes every batch. It returns what
// Decode emitted, or the first error of Read or Decode, and the final offsets.
func readAll(t *testing.T, src component.Source, from schemas.Offsets) (emitted, schemas.Offsets, error) {
	t.Helper()
	ctx := context.Background()
	if err := src.Open(ctx, from); err != nil {
		return nil, nil, err
	}
	defer src.Close()
	out := emitted{}
	for {
		b, err := src.Read(ctx)
		if errors.Is(err, io.EOF) {
			return out, src.Offsets(), nil
		}
		if err != nil {
			return out, src.Offsets(), err
		}
		if err := src.Decode(ctx, b, out.emit); err != nil {
			return out, src.Offsets(), err
		}
	}
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
