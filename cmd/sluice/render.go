package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/sluicehq/sluice/templates"
)

// renderCmd prints a pipeline file after templating, with secrets masked.
func renderCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	tf := addTemplateFlags(fs)
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: sluice render PIPELINE.yaml "+paramsUsage)
		return exitUsage
	}
	src, err := readPipeline(pos[0])
	if err != nil {
		report(stderr, err)
		return exitInvalid
	}
	tf.warnSecrets(pos[0], src)
	r, err := templates.Render(pos[0], src, templates.Input{Params: tf.opts.Params, JinjaVariables: tf.opts.JinjaVariables})
	if err != nil {
		report(stderr, err)
		return exitInvalid
	}
	shown.Merge(r.Secrets)
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", w.Pos, shown.Mask(w.Summary))
	}
	fmt.Fprint(stdout, r.Display())
	return exitOK
}
