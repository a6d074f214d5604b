package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/templates"
	"github.com/sluicehq/sluice/transforms/window"
	"gopkg.in/yaml.v3"
)

// Plan is a validated pipeline: every component built against its input schemas, in
// topological order.
type Plan struct {
	File    string
	Options Options
	// Nodes are the transforms in topological order.
	Nodes []*Node
	// Warnings are problems that do not stop the pipeline (ignored keys and the like).
	Warnings diag.List
	// SpecHash identifies the rendered spec, with secret values masked.
	SpecHash string
	// EpochInterval is how often a run cuts an epoch: the shortest trigger a sink asks for
	// (component.Context.SetTrigger), else options.checkpoint_interval. It is worked out once,
	// when the plan is built, and sinks learn it as component.SinkInfo.EpochInterval.
	EpochInterval time.Duration
	// Secrets are values that must never be shown: mask logs and errors with them.
	Secrets *secret.Set
	// Template is the file's template header, or nil.
	Template *templates.Header
	// Offline says the plan was loaded without asking any service (LoadOptions.Offline): it
	// may hold transforms checked for their config only, and cannot run.
	Offline bool
}

// Node is one transform of a plan. Outside the runner it is read-only: the tools read its
// exported fields and the accessors of view.go.
type Node struct {
	Type, Name string
	Pos        diag.Pos
	Spec       *component.Spec
	// Impl is the built component: a component.Transform, Source or Sink.
	Impl    any
	Inputs  []Edge
	Outputs []component.Output

	spec          transformSpec
	yaml          *yaml.Node
	role          string // "source" or "sink" for the pipeline's sugar keys
	refs          []ref
	explicitInput bool
	broken        bool // a key is wrong: checked for its type only
	unresolved    bool // an input reference is wrong: checked for its type and config only
	failed        bool
	// unknown: an input's schema is known only to a service not asked (Plan.Offline), so
	// the node was checked for its config only.
	unknown bool
	stateID []string // a stateful transform's identity (lineage.go)
	// window is n's own windowing: key, decoded (the one decoding of it), or nil.
	window *window.Spec
	// scope is where n is written (scope.go); comp is set for a nested chain or composite,
	// which groups transforms and is not in the plan.
	scope *scope
	comp  *composite
	// inherited is the windowing a composite gives n (at a root, or on the composite's input
	// n reads), else nil.
	inherited *window.Spec
	// trigger is the epoch length the component asked for when it was built (a sink's
	// triggering frequency), or 0.
	trigger time.Duration
}

// Edge is an input of a node: the output Tag of From.
type Edge struct {
	From *Node
	Tag  string
	// Key is the name of a named input, else "".
	Key         string
	explicitTag bool
	node        *yaml.Node
}

func (n *Node) Describe() string {
	if n.Name == n.Type {
		return n.Type
	}
	return n.Type + " '" + n.Name + "'"
}

// Output returns the output of n with the given tag.
func (n *Node) Output(tag string) (component.Output, bool) {
	for _, o := range n.Outputs {
		if o.Tag == tag {
			return o, true
		}
	}
	return component.Output{}, false
}

// Load reads and validates the pipeline file at path. The error, if any, is a diag.List with
// every problem found.
func Load(path string) (*Plan, error) { return LoadWith(path, LoadOptions{}) }

// LoadOptions are the values a template is rendered with.
type LoadOptions struct {
	// Params are -p, --parameters and --params-file values, in the order given.
	Params []templates.Param
	// JinjaVariables are Beam's --jinja_variables.
	JinjaVariables map[string]any
	// Source, when set, is the file's content: path is then only its name in messages (a
	// built-in template is loaded this way).
	Source []byte
	// Offline checks the pipeline without I/O: no component connects to anything or
	// creates a file (component.Context.Offline). sluice validate, graph and diff load so.
	Offline bool
	// Secrets, when set, receives the pipeline's secrets once it is rendered, before any
	// component is built, so that a logger masking with it masks what the build logs.
	Secrets *secret.Set
}

// LoadWith reads the pipeline file at path, renders it as a template with o's values (see
// docs/templates.md) and validates it. Positions in errors are the template file's; secret
// values are masked in them.
func LoadWith(path string, o LoadOptions) (*Plan, error) {
	src := o.Source
	if src == nil {
		var err error
		if src, err = readFile(path); err != nil {
			return nil, err
		}
	}
	r, err := templates.Render(path, src, templates.Input{Params: o.Params, JinjaVariables: o.JinjaVariables})
	if err != nil {
		return nil, err
	}
	if o.Secrets != nil {
		o.Secrets.Merge(r.Secrets)
	}
	p, err := parseWith(path, r.DocSource(), r.Doc, o.Offline)
	if p != nil {
		p.Secrets = r.Secrets
		p.Template = r.Header
		p.SpecHash = specHash(r.MaskedSource()) // secrets never enter it
	}
	if r.HasSecrets() {
		err = secretFree(path, r, err, p, o.Offline)
	}
	if r.Doc != nil {
		err = remap(err, r)
		if p != nil {
			if w, ok := remap(p.Warnings, r).(diag.List); ok {
				p.Warnings = w
			}
		}
	}
	if p != nil {
		p.Warnings = append(r.Warnings, p.Warnings...) // already at the template's lines
	}
	return p, err
}

// remap moves the positions of diagnostics in a rendered text to the template's lines.
func remap(err error, r *templates.Result) error {
	list, ok := err.(diag.List)
	if !ok {
		return err
	}
	out := make(diag.List, len(list))
	for i, d := range list {
		if d.Line > 0 {
			d.Line = r.Line(d.Line)
		}
		out[i] = d
	}
	return out
}

// Parse validates a pipeline file's content; path is used in messages. The content is not
// rendered as a template.
func Parse(path string, src []byte) (*Plan, error) { return parseWith(path, src, nil, false) }

// parseWith validates a pipeline file's content, or its already parsed document doc; offline
// as LoadOptions.Offline.
func parseWith(path string, src []byte, doc *yaml.Node, offline bool) (*Plan, error) {
	var diags diag.List
	p := &Plan{File: path, Offline: offline}
	f := load(path, src, doc, &diags, &p.Warnings)
	if f == nil {
		return nil, diags.Err()
	}
	p.Options = f.options
	p.SpecHash = specHash(src)
	if f.pipeline.Windowing != nil {
		f.window = window.Decode(f.dec, f.pipeline.Windowing)
	}
	nodes := f.resolve(f.collect()) // its problems do not stop the checks below: all are reported at once
	p.Nodes = f.order(nodes)
	if p.Nodes == nil {
		return nil, diags.Err()
	}
	for _, n := range p.Nodes {
		f.build(n, p)
	}
	f.checkErrorOutputsConsumed(p.Nodes)
	f.checkAsyncSinks(p.Nodes)
	offerCheckpointStores(p.Nodes)
	if len(diags) > 0 {
		return nil, diags.Err()
	}
	for _, n := range p.Nodes {
		// A transform checked for its config only may be stateful: counted as one, so that
		// sluice diff does not miss a change of its state.
		if _, ok := n.Impl.(component.Stateful); ok || n.unknown && n.Spec.Kind == component.KindTransform {
			n.stateID = []string{"config " + canonical(n.spec.Config), "windowing " + f.windowID(n)}
			warnUnnamedScope(n, &p.Warnings)
		}
	}
	p.EpochInterval = epochInterval(p.Nodes, p.Options)
	if sorted, ok := p.Warnings.Err().(diag.List); ok {
		p.Warnings = sorted // in file order
	}
	return p, nil
}

// specHash identifies a rendered spec.
func specHash(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:8])
}

// Delivery returns the pipeline's delivery guarantee.
func (p *Plan) Delivery() component.Delivery { return component.Delivery(p.Options.Delivery) }

// Lanes returns the number of lanes to run.
func (p *Plan) Lanes() int {
	if p.Options.Lanes > 0 {
		return p.Options.Lanes
	}
	return runtime.GOMAXPROCS(0)
}

// build builds one node against its inputs' schemas.
func (f *file) build(n *Node, p *Plan) {
	n.failed = true
	typeNode := component.MappingValue(n.yaml, "type")
	spec, ok := component.Lookup(n.Type)
	if !ok {
		f.dec.Errorf(f.dec.At(typeNode), "%s", component.Unknown(n.Type))
		return
	}
	n.Spec = spec
	if n.broken {
		return
	}
	if n.spec.ResourceHints != nil {
		p.Warnings.Add(f.dec.At(n.spec.ResourceHints), "resource_hints are ignored: sluice runs in one process")
	}
	if n.spec.Windowing != nil {
		if n.window = window.Decode(f.dec, n.spec.Windowing); n.window == nil {
			return
		}
	}
	ctx := &component.Context{Decoder: f.dec, Type: n.Type, Name: n.Name, Pos: n.Pos, Config: n.spec.Config,
		Exprs: exprCompiler{lines: f.dec.Lines}, Offline: p.Offline,
		Options: component.Options{Delivery: p.Delivery(),
			StateLimit: p.Options.StateLimitMB << 20, IdleTimeout: time.Duration(p.Options.WindowIdleTimeout)}}
	if w := f.windowingOf(n); w != nil {
		ctx.Windowing = w // never a nil *window.Spec, which would read as a windowing
	}
	if n.unresolved { // a wrong input reference, reported: its config can still be checked
		spec.CheckConfig(ctx)
		return
	}
	if !f.checkInputCount(n, spec) {
		return
	}
	for i := range n.Inputs {
		e := &n.Inputs[i]
		if e.From.failed || e.From.unknown {
			spec.CheckConfig(ctx) // no input schema to check against: report config problems only
			n.failed, n.unknown = e.From.failed, !e.From.failed
			return
		}
		out, ok := f.pickOutput(n, e)
		if !ok {
			return
		}
		if out.Schema == nil && out.From != "" { // offline: only a service knows the schema
			spec.CheckConfig(ctx)
			n.failed, n.unknown = false, true
			e.Tag = out.Tag
			return
		}
		e.Tag = out.Tag
		name := e.Key
		if name == "" {
			name = e.From.Name
		}
		ctx.Inputs = append(ctx.Inputs, component.Input{Name: name, Schema: out.Schema, Named: e.Key != "", Unbounded: unbounded(e.From)})
	}
	impl := spec.Build(ctx)
	if impl == nil {
		return
	}
	n.Impl, n.Outputs, n.failed = impl, ctx.Outputs(), false
	for _, o := range n.Outputs {
		if o.Schema == nil && o.From != "" {
			p.Warnings.Add(n.Pos, "%s: the schema of its rows comes from %s, which is not asked without --check-services: the transforms that read them are checked for their config only", n.Describe(), o.From).
				Detail = "sluice validate --check-services checks them against it"
		}
	}
	n.trigger = ctx.Trigger()
}

// unbounded says whether a source upstream of n may never end by itself: one that can be told
// to stop at its end (component.Bounded) does not otherwise.
func unbounded(n *Node) bool {
	for _, src := range n.UpstreamSources() {
		if _, ok := src.Impl.(component.Bounded); ok {
			return true
		}
	}
	return false
}

// epochInterval is Plan.EpochInterval: the shortest trigger the nodes asked for, else
// options.checkpoint_interval.
func epochInterval(nodes []*Node, o Options) time.Duration {
	var shortest time.Duration
	for _, n := range nodes {
		if n.trigger > 0 && (shortest == 0 || n.trigger < shortest) {
			shortest = n.trigger
		}
	}
	if shortest == 0 {
		return time.Duration(o.CheckpointInterval)
	}
	return shortest
}

func (f *file) checkInputCount(n *Node, spec *component.Spec) bool {
	switch {
	case spec.Kind == component.KindSource && len(n.Inputs) > 0:
		f.dec.Errorf(f.dec.At(component.MappingValue(n.yaml, "input")), "%s is a source and takes no input", n.Describe())
		return false
	case spec.Kind != component.KindSource && len(n.Inputs) < max(spec.MinInputs, 1):
		d := f.dec.Errorf(n.Pos, "%s needs an input", n.Describe())
		if !f.chain {
			d.Detail = "in a composite pipeline every transform but the sources names its input:, e.g. input: ReadFromKafka"
		}
		return false
	case spec.MaxInputs >= 0 && len(n.Inputs) > max(spec.MaxInputs, 1):
		f.dec.Errorf(f.dec.At(component.MappingValue(n.yaml, "input")), "%s takes one input, not %d; use Flatten to merge inputs",
			n.Describe(), len(n.Inputs))
		return false
	}
	return true
}

// pickOutput finds the producer output an edge consumes: the named tag, or for a bare
// reference the only output, or the one that is not the error output.
func (f *file) pickOutput(n *Node, e *Edge) (component.Output, bool) {
	from := e.From
	if e.explicitTag {
		if out, ok := from.Output(e.Tag); ok {
			return out, true
		}
		if out, ok := from.Output(component.Main); ok && len(from.Outputs) == 1 && e.Tag == "" {
			return out, true
		}
		f.dec.Errorf(f.dec.At(e.node), "%s has no output %q (its outputs: %s)", from.Describe(), e.Tag, tags(from))
		return component.Output{}, false
	}
	var main []component.Output
	for _, o := range from.Outputs {
		if !o.Errors {
			main = append(main, o)
		}
	}
	switch {
	case len(from.Outputs) == 0:
		f.dec.Errorf(f.dec.At(e.node), "%s has no output to consume (%s writes, it does not produce)", from.Describe(), from.Type)
	case len(main) == 1:
		return main[0], true
	default:
		where := n.Pos
		if e.node != nil {
			where = f.dec.At(e.node)
		}
		f.dec.Errorf(where, "%s has several outputs (%s): name one, e.g. %s.%s", from.Describe(), tags(from), from.Name, from.Outputs[0].Tag)
	}
	return component.Output{}, false
}

func tags(n *Node) string {
	var t []string
	for _, o := range n.Outputs {
		t = append(t, o.Tag)
	}
	return strings.Join(t, ", ")
}

// checkErrorOutputsConsumed rejects error outputs nobody reads: their records would be lost.
func (f *file) checkErrorOutputsConsumed(nodes []*Node) {
	consumed := map[*Node]map[string]bool{}
	for _, n := range nodes {
		for _, e := range n.Inputs {
			if consumed[e.From] == nil {
				consumed[e.From] = map[string]bool{}
			}
			consumed[e.From][e.Tag] = true
		}
	}
	for _, n := range nodes {
		for _, o := range n.Outputs {
			if o.Errors && !consumed[n][o.Tag] {
				at := n.Pos
				if eh := component.MappingValue(n.spec.Config, "error_handling"); eh != nil {
					at = f.dec.At(eh)
				}
				f.dec.Errorf(at, "unconsumed error output %s.%s: failed records would be lost", n.Name, o.Tag).
					Detail = fmt.Sprintf("add a transform with input: %s.%s, e.g. a WriteToJson dead-letter sink", n.Name, o.Tag)
			}
		}
	}
}

// checkAsyncSinks refuses asynchronous progress with a sink that delivers its rows only when
// it commits (as Spark allows it only with the Kafka sink): progress is its commit, so it
// would show nothing between two progress writes.
func (f *file) checkAsyncSinks(nodes []*Node) {
	if !f.options.AsyncProgressTracking {
		return
	}
	for _, n := range nodes {
		if n.Spec == nil || n.Spec.Kind != component.KindSink || n.Impl == nil {
			continue
		}
		if _, ok := n.Impl.(component.Streaming); !ok {
			f.dec.Errorf(n.Pos, "%s delivers its rows when it commits, so with async_progress_tracking it would show nothing between two progress writes (every %v)",
				n.Type, time.Duration(f.options.AsyncProgressCheckpointingInterval)).
				Detail = "asynchronous progress suits sinks that deliver as they write (WriteToKafka); remove async_progress_tracking, and lower the sink's triggering frequency or checkpoint_interval for fresher data instead"
		}
	}
}

// windowID is the windowing in effect for n as canonical JSON of its meaning, so that
// "size: 60s" and "size: 1m" are the same windowing.
func (f *file) windowID(n *Node) string {
	w := f.windowingOf(n)
	if w == nil {
		return `{"type":"global"}`
	}
	b, err := json.Marshal(w)
	if err != nil {
		return "unencodable"
	}
	return string(b)
}

// windowingOf returns the windowing in effect for n's input, following Beam's push-down: n's
// own `windowing:`, else the one a composite gives it (scope.go), else that of the transform
// producing its (first) input, and so on up, else, at a root, the pipeline's; nil for the
// global window. WindowInto takes only its own:
// it is what sets one. Each windowing: key was decoded once, where it is written.
func (f *file) windowingOf(n *Node) *window.Spec {
	switch {
	case n.spec.Windowing != nil || n.Type == "WindowInto":
		return n.window
	case n.inherited != nil:
		return n.inherited
	case len(n.Inputs) == 0:
		return f.window
	}
	return f.windowingOf(n.Inputs[0].From)
}

// offerCheckpointStores gives every sink that keeps its checkpoints in a store the store of
// the first source upstream that offers one (component.CheckpointStoreUser).
func offerCheckpointStores(nodes []*Node) {
	for _, n := range nodes {
		user, ok := n.Impl.(component.CheckpointStoreUser)
		if !ok {
			continue
		}
		for _, src := range n.UpstreamSources() {
			if cs, ok := src.Impl.(component.CheckpointStores); ok {
				user.UseCheckpointStore(cs.CheckpointStore())
				break
			}
		}
	}
}
