package templates

import (
	"errors"

	"github.com/nikolalohinski/gonja/v2/tokens"
	"github.com/sluicehq/sluice/internal/diag"
)

// maxUndeclared bounds the renders dropUndeclared makes: one per undeclared name.
const maxUndeclared = 200

// dropUndeclared makes every variable that a template with a header uses but neither declares
// nor is given unset, as Dataflow's launcher renders it (an Undefined that prints a marker,
// whose keys and list items are then removed), and returns a warning for each, at its first
// use. It renders the template once per such name: the Jinja engine stops at the first
// undefined one. A file without a header keeps Beam's rule: an undefined variable is an error.
func dropUndeclared(path string, src []byte, vars map[string]any) diag.List {
	tpl, err := compile(path, src, false)
	if err != nil {
		return nil // run reports it
	}
	var warnings diag.List
	for i := 0; i < maxUndeclared; i++ {
		_, err := tpl.render(vars)
		var te *templateError
		if !errors.As(err, &te) || te.name == "" {
			break
		}
		if _, seen := vars[te.name]; seen {
			break // not a top-level name the engine looked up: leave the error to run
		}
		vars[te.name] = unset(false)
		warnings.Add(te.pos(path), "variable %q is not declared in the template's parameters: dropped, as Dataflow does", te.name).
			Detail = "it is unset: false in {% if %}, and a key or list item whose value it is is removed; declare it under template.parameters to give it a value"
	}
	return warnings
}

// variablesUsed returns the names in the template's Jinja tags (keywords, filters and loop
// variables too, which is harmless for its one use: telling a parameter meant for the pipeline
// from a misspelt one). gonja's AST walker does not descend into tags, so this reads tokens.
func variablesUsed(src []byte) map[string]bool {
	used := map[string]bool{}
	for s := tokens.LexAll(string(src), jinjaConfig()); !s.End(); {
		if t := s.Next(); t.Type == tokens.Name {
			used[t.Val] = true
		}
	}
	return used
}
