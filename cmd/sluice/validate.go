package main

import (
	"flag"
	"fmt"
	"io"
)

func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	checkServices := fs.Bool("check-services", false, "also ask the services the pipeline names: do its tables exist, what are their columns, what is a registry subject's latest schema")
	tf := addTemplateFlags(fs)
	tf.addPipelineFlags()
	pos, ok := parse(fs, args, stderr)
	if ok {
		pos, ok = tf.pipelineArgs(pos, stderr)
	}
	if !ok {
		return exitUsage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: sluice validate [--check-services] PIPELINE.yaml... "+paramsUsage)
		return exitUsage
	}
	// Validating writes nothing and connects to nothing (docs/operations.md): what only a
	// service can tell is checked with --check-services, or when the pipeline runs.
	tf.opts.Offline = !*checkServices
	code := exitOK
	for _, path := range pos {
		if suite, err := beamSuite(path); suite != nil || err != nil {
			if !validateSuite(path, suite, err, tf, stdout, stderr) {
				code = exitInvalid
			}
			continue
		}
		p, err := tf.load(path)
		if err != nil {
			report(stderr, err)
			code = exitInvalid
			continue
		}
		for _, w := range p.Warnings {
			fmt.Fprintf(stderr, "%s: warning: %s\n", w.Pos, shown.Mask(w.Summary))
		}
		fmt.Fprintf(stdout, "%s: valid (%d transforms; pipeline %s)\n", sourceName(path), len(p.Nodes), p.Options.Name)
	}
	return code
}

func graphCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	format := fs.String("format", "dot", "dot or mermaid")
	tf := addTemplateFlags(fs)
	tf.addPipelineFlags()
	pos, ok := parse(fs, args, stderr)
	if ok {
		pos, ok = tf.pipelineArgs(pos, stderr)
	}
	if !ok {
		return exitUsage
	}
	if len(pos) != 1 || (*format != "dot" && *format != "mermaid") {
		fmt.Fprintln(stderr, "usage: sluice graph PIPELINE.yaml [--format dot|mermaid]")
		return exitUsage
	}
	tf.opts.Offline = true // drawing the graph writes nothing and connects to nothing
	p, err := tf.load(pos[0])
	if err != nil {
		report(stderr, err)
		return exitInvalid
	}
	if *format == "mermaid" {
		fmt.Fprint(stdout, p.Mermaid())
	} else {
		fmt.Fprint(stdout, p.DOT())
	}
	return exitOK
}
