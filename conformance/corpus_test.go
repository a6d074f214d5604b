package conformance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/conformance"
	_ "github.com/sluicehq/sluice/connectors/all"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// TestBeamCorpus runs every pipeline of testdata/beam (one folder per topic) and compares
// the rows it logs with its "# Expected:" block, or its error with "# Expected error:".
func TestBeamCorpus(t *testing.T) {
	files, err := conformance.Files("../testdata/beam")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files under testdata/beam (%v)", err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel("../testdata/beam", path)
		t.Run(strings.TrimSuffix(rel, ".yaml"), func(t *testing.T) {
			c, err := conformance.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Check(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDocExamples runs the pipelines of docs/*.md that show their output in an
// "# Expected:" block.
func TestDocExamples(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, doc := range docs {
		md, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range conformance.DocPipelines(md) {
			name := fmt.Sprintf("%s-%d", strings.TrimSuffix(filepath.Base(doc), ".md"), i+1)
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), name+".yaml")
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				c, err := conformance.Read(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Check(context.Background()); err != nil {
					t.Error(err)
				}
			})
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("no example with an # Expected: block in docs/*.md")
	}
}

func TestParseRepr(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`Row(word='a', count=1)`, `{"count":1,"word":"a"}`},
		{`Row(a=None, b=True, c=[1, 2.5], d=Row(e="x\'y"), f={'k': (1,)})`, `{"a":null,"b":true,"c":[1,2.5],"d":{"e":"x'y"},"f":{"k":[1]}}`},
		{`Row(s='\u00e9\n')`, `{"s":"é\n"}`},
	} {
		v, err := conformance.ParseRepr(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got := conformance.Canonical(v); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.want)
		}
	}
}
