package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Connectors get expressions through component.Expressions: typed, positioned, concurrent.
func TestExprCompilerForConnectors(t *testing.T) {
	in := schemas.New(
		schemas.Field{Name: "user", Type: schemas.Type{Kind: schemas.String}},
		schemas.Field{Name: "n", Type: schemas.Type{Kind: schemas.Int64}},
	)
	src := "key: user + \"-\" + string(n)\nbad: usr\nzero: 10 / n\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	d := &component.Decoder{File: "k.yaml", Lines: strings.Split(src, "\n"), Diags: &diags}
	var cfg struct {
		Key  component.Expr `yaml:"key"`
		Bad  component.Expr `yaml:"bad"`
		Zero component.Expr `yaml:"zero"`
	}
	d.Decode(doc.Content[0], &cfg, "test")
	c := exprCompiler{lines: d.Lines}

	key, typ, err := c.Compile(cfg.Key, in, "")
	if err != nil || typ.Kind != schemas.String {
		t.Fatalf("compile: %v, type %v", err, typ)
	}
	done := make(chan any, 8)
	for i := range 8 {
		go func() {
			v, err := key(schemas.Row{"ada", int64(i)})
			if err != nil {
				done <- err
				return
			}
			done <- v
		}()
	}
	got := map[any]bool{}
	for range 8 {
		got[<-done] = true
	}
	if !got["ada-0"] || !got["ada-7"] || len(got) != 8 {
		t.Errorf("concurrent evaluations gave %v", got)
	}

	if _, _, err := c.Compile(cfg.Bad, in, ""); err == nil || !strings.Contains(err.Error(), `k.yaml:2:6: unknown field "usr"`) {
		t.Errorf("unknown field: %v", err)
	}
	if _, _, err := c.Compile(cfg.Key, in, "ruby"); err == nil {
		t.Error("ruby accepted")
	}
	zero, _, err := c.Compile(cfg.Zero, in, "")
	if err != nil {
		t.Fatal(err)
	}
	var ee interface{ Unwrap() error }
	if _, err := zero(schemas.Row{"x", int64(0)}); err == nil || !errors.As(err, &ee) || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("division by zero: %v", err)
	}
}
