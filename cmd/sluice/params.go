package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
)

// templateFlags are the flags that give a template its values: -p NAME=VALUE (repeatable),
// --parameters in gcloud's syntax, --params-file and Beam's --jinja_variables; and --name, the
// pipeline's name in its checkpoints.
type templateFlags struct {
	opts runner.LoadOptions
	fs   *flag.FlagSet // its output is where warnings go, unless warn is set
	// warn, when set, takes the warnings instead (sluice run: its log).
	warn func(msg string)
	name string
	// pipeline is the pipeline given by a gcloud flag (--yaml-pipeline-file,
	// --yaml-pipeline, --template-file-gcs-location), or "".
	pipeline, pipelineFlag string
}

const paramsUsage = "[-p NAME=VALUE]... [--parameters K=V,K2=V2] [--params-file F] [--jinja_variables JSON] [--name NAME]"

// jobNameParam is the parameter by which a template names its job (gcloud's JOB_NAME).
const jobNameParam = "jobName"

// addTemplateFlags registers the template flags on fs.
func addTemplateFlags(fs *flag.FlagSet) *templateFlags {
	t := &templateFlags{fs: fs}
	fs.StringVar(&t.name, "name", "", "the pipeline's name in its checkpoints, over options.name and a template's jobName (docs/templates.md)")
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
// built-in template (template:NAME) or standard input (-).
func (t *templateFlags) load(path string) (*runner.Plan, error) {
	src, err := readPipeline(path)
	if err != nil {
		return nil, err
	}
	path = sourceName(path)
	t.warnSecrets(path, src)
	o := t.opts
	o.Source, o.Params = src, t.params(path, src)
	p, err := runner.LoadWith(path, o)
	if p != nil {
		shown.Merge(p.Secrets)
		p.Options.Name = t.jobName(p, path)
	}
	return p, err
}

// params are the parameters given, and --name as the template's jobName when the template at
// path declares one and it is not given.
func (t *templateFlags) params(path string, src []byte) []templates.Param {
	ps := t.opts.Params
	if t.name != "" && !given(ps, jobNameParam) && templates.ReadHeader(path, src, &diag.List{}).Param(jobNameParam) != nil {
		ps = append(slices.Clip(ps), templates.Param{Name: jobNameParam, Value: t.name, From: "--name"})
	}
	return ps
}

// addPipelineFlags registers the flags by which gcloud dataflow yaml run and flex-template
// run give the pipeline, for the commands that take one pipeline (pipelineArgs).
func (t *templateFlags) addPipelineFlags() {
	add := func(name, usage string, path func(string) (string, error)) {
		t.fs.Func(name, usage, func(s string) error {
			p, err := path(s)
			if err == nil && t.pipeline != "" {
				err = fmt.Errorf("the pipeline is given already, by --%s", t.pipelineFlag)
			}
			t.pipeline, t.pipelineFlag = p, name
			return err
		})
	}
	add("yaml-pipeline-file", "the pipeline file, as gcloud dataflow yaml run takes it; an argument is then the job name (as --name)",
		func(s string) (string, error) { return s, nil })
	add("yaml-pipeline", "the pipeline's text, as gcloud dataflow yaml run takes it; an argument is then the job name",
		func(s string) (string, error) { inlinePipeline = []byte(s); return inlineName, nil })
	add("template-file-gcs-location", "a template, as gcloud dataflow flex-template run takes it: a local file, or the location of a Google template that sluice has built in (gs://.../flex/Kafka_to_Kafka is template:Kafka_To_Kafka); an argument is then the job name",
		templateLocation)
}

// pipelineArgs returns the pipelines that pos names, as a command's arguments give them: the
// arguments themselves, or with a gcloud pipeline flag, that pipeline, an argument being the
// job name as gcloud takes it (gcloud dataflow yaml run JOB_NAME --yaml-pipeline-file=F).
// A wrong combination is a usage error, told on stderr (ok false).
func (t *templateFlags) pipelineArgs(pos []string, stderr io.Writer) (_ []string, ok bool) {
	if t.pipeline == "" {
		return pos, true
	}
	switch {
	case len(pos) > 1:
		fmt.Fprintf(stderr, "sluice %s: --%s gives the pipeline, so the arguments %s are one too many: give the job name alone\n", t.fs.Name(), t.pipelineFlag, strings.Join(pos, " "))
		return nil, false
	case len(pos) == 1 && t.name != "" && t.name != pos[0]:
		fmt.Fprintf(stderr, "sluice %s: the job name is given twice: %s and --name %s\n", t.fs.Name(), pos[0], t.name)
		return nil, false
	case len(pos) == 1:
		t.name = pos[0]
	}
	return []string{t.pipeline}, true
}

// templateLocation is the pipeline that gcloud's --template-file-gcs-location names: a local
// file as it is; in Cloud Storage, the built-in template of a Google template's name
// (gs://dataflow-templates-REGION/latest/flex/Kafka_to_BigQuery_Flex is Kafka_To_BigQuery).
func templateLocation(loc string) (string, error) {
	if !strings.HasPrefix(loc, "gs://") {
		return loc, nil
	}
	name := path.Base(loc)
	for _, suffix := range []string{"_Flex", "_Yaml", "_YAML"} {
		name = strings.TrimSuffix(name, suffix)
	}
	var names []string
	for _, b := range templates.Builtins() {
		if strings.EqualFold(b.Name, name) {
			return templates.BuiltinPrefix + b.Name, nil
		}
		names = append(names, b.Name)
	}
	return "", fmt.Errorf("%s is in Cloud Storage, which sluice does not read, and names none of its built-in templates (%s): copy the file (gcloud storage cp) and give its local path", loc, strings.Join(names, ", "))
}

// jobName is the name of the pipeline p loaded from path: --name; else, for a template run
// with its jobName's default, that default and a hash of what the job reads and writes, so
// that two runs of one template on different topics or tables are two pipelines and a run
// with other tuning is the same one; else options.name (for standard input, "stdin").
func (t *templateFlags) jobName(p *runner.Plan, path string) string {
	switch {
	case t.name != "":
		return t.name
	case p.Template != nil && !given(t.opts.Params, jobNameParam):
		if param := p.Template.Param(jobNameParam); param != nil && param.Default != nil && *param.Default == p.Options.Name {
			return p.Options.Name + "-" + identityHash(p)
		}
	case path == stdinName && p.Options.Name == stdinName:
		return "stdin"
	}
	return p.Options.Name
}

// identityHash is a short hash of the identities of p's sources and sinks (what their
// checkpoints' offsets belong to: topics, groups, tables, paths).
func identityHash(p *runner.Plan) string {
	sh := runner.ShapeOf(p)
	var facts []string
	for _, m := range []map[string][]string{sh.Sources, sh.Sinks} {
		for _, id := range m {
			facts = append(facts, id...)
		}
	}
	slices.Sort(facts)
	sum := sha256.Sum256([]byte(strings.Join(facts, "\n")))
	return hex.EncodeToString(sum[:4])
}

// given reports whether a parameter of that name is among ps.
func given(ps []templates.Param, name string) bool {
	return slices.ContainsFunc(ps, func(p templates.Param) bool { return p.Name == name })
}

// warnSecrets warns about each password parameter whose value was given on the command line,
// where other users of the machine can read it (ps, /proc, shell history). The value is not
// shown.
func (t *templateFlags) warnSecrets(path string, src []byte) {
	var diags diag.List
	for _, p := range templates.CommandLineSecrets(templates.ReadHeader(path, src, &diags), t.opts.Params) {
		msg := fmt.Sprintf("the value of password parameter %q is given with %s, where other users of this machine can read it (ps, shell history): give %s '%s=${env:NAME}' or '%s=${file:PATH}'",
			p.Name, p.From, p.From, p.Name, p.Name)
		if t.warn != nil {
			t.warn(msg)
		} else {
			fmt.Fprintf(t.fs.Output(), "sluice: warning: %s\n", msg)
		}
	}
}

// inlineName is how messages name the pipeline given as text by --yaml-pipeline, whose text
// is inlinePipeline.
const inlineName = "<yaml-pipeline>"

var inlinePipeline []byte

// stdinName is how messages name a pipeline read from standard input ("-"), as gofmt does.
const stdinName = "<stdin>"

// stdin is what "-" reads; tests replace it. One command reads it once (stdinRead), however
// many times it looks at the pipeline.
var (
	stdin     io.Reader = os.Stdin
	stdinRead *[]byte
)

// sourceName is how messages name the pipeline at path.
func sourceName(path string) string {
	if path == "-" {
		return stdinName
	}
	return path
}

// readPipeline reads a pipeline file, the source of a built-in template (template:NAME), or
// standard input (-).
func readPipeline(path string) ([]byte, error) {
	if path == "-" {
		if stdinRead == nil {
			src, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("cannot read the pipeline from standard input: %w", err)
			}
			stdinRead = &src
		}
		return *stdinRead, nil
	}
	if path == inlineName {
		return inlinePipeline, nil
	}
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
