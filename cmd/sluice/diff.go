package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
	"github.com/sluicehq/sluice/tools/diff"
)

// exitIncompatible is sluice diff's exit code when the new spec cannot resume from the old
// one's checkpoints, so that CI can gate a rollout on it.
const exitIncompatible = 1

const diffUsage = `usage: sluice diff OLD.yaml NEW.yaml ` + paramsUsage + ` [--json] [--quiet]

A semantic diff of two versions of a pipeline (transforms, schemas, sources and sinks,
options) and whether NEW can resume from the checkpoints OLD wrote (docs/upgrades.md).
The template parameters apply to both files. Either file may be - (standard input) or a
stream such as <(git show HEAD~1:pipeline.yaml): it is then read as if it stood at the
other file's path, so its relative Jinja includes resolve against that file's directory and
a pipeline without options.name gets that file's name (two streams stand as ./pipeline.yaml).
Exit codes: 0 no incompatible change, 1 an incompatible change or an invalid pipeline,
2 usage error.
`

// diffCmd prints the semantic diff of two pipelines and the upgrade verdict.
func diffCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the diff as JSON")
	quiet := fs.Bool("quiet", false, "print only the verdict")
	tf := addTemplateFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, diffUsage)
		fs.PrintDefaults()
	}
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) != 2 || pos[0] == "-" && pos[1] == "-" {
		fmt.Fprint(stderr, diffUsage)
		return exitUsage
	}
	in := [2]*diffInput{{arg: pos[0]}, {arg: pos[1]}}
	for _, d := range in {
		if err := d.read(); err != nil {
			report(stderr, err)
			return exitInvalid
		}
	}
	in[0].standIn(in[1])
	in[1].standIn(in[0])
	var plans [2]*runner.Plan
	code := exitOK
	tf.opts.Offline = true // a diff writes nothing and connects to nothing
	for i, d := range in {
		p, err := d.load(tf.opts)
		if p != nil {
			p.Options.Name = tf.jobName(p, d.path) // as run names it
		}
		if err != nil {
			report(stderr, err)
			code = exitInvalid
		}
		plans[i] = p
	}
	if code != exitOK {
		return code
	}
	d := diff.Plans(plans[0], plans[1])
	d.Old, d.New = in[0].display(), in[1].display()
	if *asJSON {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			report(stderr, fmt.Errorf("encoding the diff: %w", err))
			return exitRuntime
		}
		fmt.Fprint(stdout, shown.Mask(b.String()))
	} else {
		fmt.Fprint(stdout, shown.Mask(d.Text(*quiet)))
	}
	if !d.Verdict.Compatible {
		return exitIncompatible
	}
	return exitOK
}

// diffInput is one side of a diff: a pipeline file, a built-in template, standard input or a
// stream such as /dev/fd/N.
type diffInput struct {
	arg    string
	src    []byte
	stream bool
	path   string // the path it is loaded as
}

// read reads the input's content.
func (d *diffInput) read() error {
	d.path = d.arg
	if d.arg == "-" {
		src, err := readPipeline(d.arg)
		d.src, d.stream = src, true
		return err
	}
	if !strings.HasPrefix(d.arg, templates.BuiltinPrefix) {
		if fi, err := os.Stat(d.arg); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			d.stream = true
		}
	}
	src, err := readPipeline(d.arg)
	d.src = src
	return err
}

// standIn gives a stream the path of the other side, unless that is a stream too: then it
// stands in the current directory as pipeline.yaml.
func (d *diffInput) standIn(other *diffInput) {
	switch {
	case !d.stream:
	case !other.stream:
		d.path = other.arg
	default:
		d.path = "pipeline.yaml"
	}
}

// display is the input's name in messages.
func (d *diffInput) display() string {
	return sourceName(d.arg)
}

// load renders and validates the input. Problems in a stream name the stream, not the path
// it stands at.
func (d *diffInput) load(o runner.LoadOptions) (*runner.Plan, error) {
	o.Source = d.src
	p, err := runner.LoadWith(d.path, o)
	if p != nil {
		shown.Merge(p.Secrets)
	}
	var list diag.List
	if err != nil && d.path != d.arg && errors.As(err, &list) {
		renamed := make(diag.List, len(list))
		for i, e := range list {
			if e.File == d.path {
				e.File = d.display()
			}
			renamed[i] = e
		}
		return p, renamed
	}
	return p, err
}
