package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sluicehq/sluice/templates"
)

// templatesCmd lists the built-in templates or describes one.
func templatesCmd(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "list":
		w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tDESCRIPTION")
		for _, b := range templates.Builtins() {
			fmt.Fprintf(w, "%s\t%s\n", b.Name, firstSentence(b.Header.Description))
		}
		_ = w.Flush()
		fmt.Fprintln(stdout, "\nsluice templates describe NAME shows a template's parameters; sluice run template:NAME -p ... runs it.")
		return exitOK
	case len(args) == 2 && args[0] == "describe":
		b, err := templates.LookupBuiltin(args[1])
		if err != nil {
			report(stderr, err)
			return exitInvalid
		}
		describeTemplate(stdout, b)
		return exitOK
	}
	fmt.Fprintln(stderr, "usage: sluice templates list | sluice templates describe NAME")
	return exitUsage
}

// describeTemplate prints a template's description and a table of its parameters.
func describeTemplate(w io.Writer, b templates.Builtin) {
	h := b.Header
	fmt.Fprintf(w, "%s: %s\n\n%s\n\n", h.Name, h.DisplayName, strings.TrimSpace(h.Description))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAMETER\tTYPE\tREQUIRED\tDEFAULT\tDESCRIPTION")
	for _, p := range h.Params {
		typ, req, def := p.Type, "no", ""
		if p.Type == templates.TypeEnum {
			typ = "enum(" + strings.Join(p.EnumOptions, "|") + ")"
		}
		if p.Required {
			req = "yes"
		}
		if p.Default != nil {
			def = *p.Default
		}
		if p.Name == jobNameParam && p.Default != nil {
			def += "-HASH" // see jobName: the hash of what the job reads and writes
		}
		desc := p.Help
		if desc == "" {
			desc = p.Description
		}
		if p.Unsupported != "" {
			typ, desc = "unsupported", p.Unsupported
		} else if p.Example != "" && !p.Secret() {
			desc += " e.g. " + p.Example
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, typ, req, def, desc)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nRun: sluice run %s -p NAME=VALUE ... (or --parameters in gcloud's syntax); see the pipeline with sluice render %s -p ...\n", b.Path, b.Path)
}

// firstSentence returns s up to its first full stop, on one line.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
