// Package componenttest builds components from YAML snippets the way the runner does and
// collects what they emit, for the tests of the packages that implement components.
//
// A snippet is one component's mapping as it stands in a pipeline file (type, config):
//
//	b := componenttest.Env{Name: "step"}.Build(t, "Filter", "config:\n  keep: id > 1", orders)
//	if err := b.Err(); err != nil {
//		t.Fatal(err)
//	}
//	out := componenttest.Emitted{}
//	err := b.Component.(component.Transform).Process(ctx, 0, batch, out.Emit)
//
// Diagnostics carry the file name of the Env, so tests assert on "file:line:col: message"
// exactly as a user reads it.
package componenttest
