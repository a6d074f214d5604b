package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
)

// schemaCmd prints the JSON Schema of pipeline files, or of one component type's config.
func schemaCmd(args []string, stdout, stderr io.Writer) int {
	var schema map[string]any
	switch len(args) {
	case 0:
		schema = runner.FormatSchema()
	case 1:
		var ok bool
		if schema, ok = runner.ComponentSchema(args[0]); !ok {
			fmt.Fprintf(stderr, "sluice schema: unknown transform type %q%s\n", args[0], diag.DidYouMean(args[0], component.Names()))
			return exitUsage
		}
	default:
		fmt.Fprintln(stderr, "usage: sluice schema [TYPE]")
		return exitUsage
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(schema); err != nil {
		report(stderr, err)
		return exitRuntime
	}
	return exitOK
}
