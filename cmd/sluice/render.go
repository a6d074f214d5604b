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
	tf.addPipelineFlags()
	pos, ok := parse(fs, args, stderr)
	if ok {
		pos, ok = tf.pipelineArgs(pos, stderr)
	}
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
	path := sourceName(pos[0])
	tf.warnSecrets(path, src)
	r, err := templates.Render(path, src, templates.Input{Params: tf.params(path, src), JinjaVariables: tf.opts.JinjaVariables})
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
