package generator

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzTemplate checks that no template text makes Parse or rendering panic, that every
// problem has a position, and that a message renders the same twice. Seeds:
// testdata/fuzz/FuzzGeneratorTemplate and the built-in templates.
func FuzzGeneratorTemplate(f *testing.F) {
	for _, text := range Templates {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tmpl, err := Parse(text)
		if err != nil {
			var errs TemplateErrors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Parse(%q) failed without positions: %v", text, err)
			}
			for _, e := range errs {
				if e.Line < 1 || e.Col < 1 || e.Msg == "" {
					t.Fatalf("Parse(%q): problem without a position: %+v", text, e)
				}
			}
			return
		}
		at := time.Unix(1_700_000_000, 0).UTC()
		for index := range int64(3) {
			a, errA := tmpl.NewRenderer(5).Render(nil, index, at)
			b, errB := tmpl.NewRenderer(5).Render(nil, index, at)
			if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
				t.Fatalf("%q message %d rendered differently: %q (%v) and %q (%v)", text, index, a, errA, b, errB)
			}
			var te *TemplateError
			if errA != nil && !errors.As(errA, &te) {
				t.Fatalf("%q: rendering failed without a position: %v", text, errA)
			}
		}
	})
}
