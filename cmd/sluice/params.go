package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
)

// templateFlags are the flags that give a template its values: -p NAME=VALUE (repeatable),
// --parameters in gcloud's syntax, --params-file and Beam's --jinja_variables.
type templateFlags struct {
	opts runner.LoadOptions
	fs   *flag.FlagSet // its output is where warnings go
}

const paramsUsage = "[-p NAME=VALUE]... [--parameters K=V,K2=V2] [--params-file F] [--jinja_variables JSON]"

// addTemplateFlags registers the template flags on fs.
func addTemplateFlags(fs *flag.FlagSet) *templateFlags {
	t := &templateFlags{fs: fs}
	fs.Func("p", "a template parameter NAME=VALUE (repeatable)", func(s string) error {
		p, err := templates.ParseAssignment(s, "-p")
		if err == nil {
			t.opts.Params = append(t.opts.Params, p)
		}
		return err
	})
	fs.Func("parameters", "template parameters in gcloud's syntax: K=V,K2=V2 or ^@^K=V@K2=V2", func(s string) error {
		ps, err := templates.ParseGcloud(s)
		t.opts.Params = append(t.opts.Params, ps...)
		return err
	})
	fs.Func("params-file", "a JSON or YAML file of template parameters NAME: VALUE", func(s string) error {
		ps, err := templates.ReadParamsFile(s)
		t.opts.Params = append(t.opts.Params, ps...)
		return err
	})
	jinja := func(s string) error {
		vars, err := templates.ParseJinjaVariables(s)
		if t.opts.JinjaVariables == nil {
			t.opts.JinjaVariables = map[string]any{}
		}
		for k, v := range vars {
			t.opts.JinjaVariables[k] = v
		}
		return err
	}
	fs.Func("jinja_variables", `Jinja variables as a JSON object, as Beam's --jinja_variables '{"k": "v"}'`, jinja)
	fs.Func("jinja-variables", "the same as --jinja_variables, as gcloud dataflow yaml run spells it", jinja)
	return t
}

// shown holds the secrets of every pipeline this process loaded: report masks errors with
// them, whichever command prints them.
var shown secret.Set

// load loads and validates a pipeline with the template flags' values. path may name a
// built-in template: template:NAME.
func (t *templateFlags) load(path string) (*runner.Plan, error) {
	src, err := readPipeline(path)
	if err != nil {
		return nil, err
	}
	t.warnSecrets(path, src)
	o := t.opts
	o.Source = src
	p, err := runner.LoadWith(path, o)
	if p != nil {
		shown.Merge(p.Secrets)
	}
	return p, err
}

// warnSecrets warns about each password parameter whose value was given on the command line,
// where other users of the machine can read it (ps, /proc, shell history). The value is not
// shown.
func (t *templateFlags) warnSecrets(path string, src []byte) {
	var diags diag.List
	for _, p := range templates.CommandLineSecrets(templates.ReadHeader(path, src, &diags), t.opts.Params) {
		fmt.Fprintf(t.fs.Output(), "sluice: warning: the value of password parameter %q is given with %s, where other users of this machine can read it (ps, shell history): give %s '%s=${env:NAME}' or '%s=${file:PATH}'\n",
			p.Name, p.From, p.From, p.Name, p.Name)
	}
}

// readPipeline reads a pipeline file, or the source of a built-in template (template:NAME).
func readPipeline(path string) ([]byte, error) {
	if strings.HasPrefix(path, templates.BuiltinPrefix) {
		b, err := templates.LookupBuiltin(path)
		if err != nil {
			return nil, err
		}
		return b.Source, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the pipeline file: %w", err)
	}
	return src, nil
}

// loadForRun loads a pipeline to run and returns log with the pipeline's secrets masked. It
// also becomes slog's default logger, which components log to (LogForTesting's rows, lost
// connections), so that their lines have the run's format and level.
func loadForRun(path string, t *templateFlags, log *slog.Logger) (*runner.Plan, *slog.Logger, error) {
	p, err := t.load(path)
	if p != nil && p.Secrets.Len() > 0 {
		log = slog.New(maskHandler{h: log.Handler(), s: p.Secrets})
	}
	slog.SetDefault(log)
	return p, log, err
}

// maskHandler masks secrets in log records: in the message and in every attribute.
type maskHandler struct {
	h slog.Handler
	s *secret.Set
}

func (m maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, m.s.Mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(m.attr(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = m.attr(a)
	}
	return maskHandler{h: m.h.WithAttrs(masked), s: m.s}
}

func (m maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{h: m.h.WithGroup(name), s: m.s}
}

func (m maskHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, m.s.Mask(v.String()))
	case slog.KindGroup:
		g := v.Group()
		masked := make([]any, len(g))
		for i, e := range g {
			masked[i] = m.attr(e)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		text := fmt.Sprint(v.Any())
		if masked := m.s.Mask(text); masked != text {
			return slog.String(a.Key, masked)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
