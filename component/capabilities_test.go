package component

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapabilitiesDocumented holds docs/architecture.md's checklist of the contract to the
// package: every exported interface of component has a row there.
func TestCapabilitiesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			if _, ok := ts.Type.(*ast.InterfaceType); !ok {
				return true
			}
			checked++
			if !strings.Contains(string(doc), "`"+ts.Name.Name+"`") {
				t.Errorf("interface %s (%s) has no row in docs/architecture.md's capability table", ts.Name.Name, fset.Position(ts.Pos()))
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("found %d interfaces in package component; the parse is broken", checked)
	}
}
