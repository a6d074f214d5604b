package expr

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// FuzzCompile: no expression text, in any language, panics the compiler or the evaluator.
// Seeds are in testdata/fuzz/FuzzCompile.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"amount > 1", "upper(name) + '!'", "count ?? 0", "x if c else y",
		"user.address.zip", "10 / amount", "let x = 1; x + amount", "filter(tags, # != 'a')"} {
		f.Add(s, false)
	}
	lines := []string{"keep: |", "  a", "  b"}
	f.Fuzz(func(t *testing.T, text string, python bool) {
		lang := ""
		if python {
			lang = "python"
		}
		for _, style := range []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.LiteralStyle} {
			e := component.Expr{Text: text, Pos: diag.Pos{File: "p.yaml", Line: 2, Col: 3},
				Node: &yaml.Node{Kind: yaml.ScalarNode, Style: style}, Block: style == yaml.LiteralStyle}
			p, err := Compile(e, testSchema, Options{Language: lang, Lines: lines})
			if err != nil {
				if strings.Contains(err.Error(), "internal error") {
					t.Fatalf("%q: %v", text, err)
				}
				continue
			}
			s := NewEvaluator(testSchema, p).Scope()
			s.Bind(testRow())
			_, _ = s.Eval(0)
			s.Release()
		}
	})
}
