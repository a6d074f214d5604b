package pipelinetest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Result is the outcome of one Test.
type Result struct {
	Test *Test
	// Failures describe every expectation that was not met, each with a diff; none when the
	// test passed.
	Failures []string
}

// Passed reports whether every expectation was met.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Run runs t on the validated pipeline p in this process, with no services: mocked
// transforms emit the test's elements, sinks never run, and only the transforms the
// expectations need are run, in one pass. Problems with the test itself (an unknown name, an
// unmocked source, an element that does not fit its schema) come as a diag.List error; a
// pipeline failure or an unmet expectation is a failure of the result.
func Run(ctx context.Context, p *runner.Plan, t *Test) (*Result, error) {
	r := &testRun{plan: p, test: t, mockOut: map[outRef]*schemas.Batch{}, mocked: map[*runner.Node]bool{},
		mockIn: map[*runner.Node]*schemas.Batch{}, expIn: map[*runner.Node]*expectation{}, expOut: map[outRef]*expectation{},
		needed: map[*runner.Node]bool{}, consumers: map[outRef][]consumer{}}
	r.prepare()
	if len(r.diags) > 0 {
		return nil, r.diags.Err()
	}
	res := &Result{Test: t}
	if err := r.execute(ctx); err != nil {
		res.Failures = append(res.Failures, "the pipeline failed: "+err.Error())
		return res, nil
	}
	for _, e := range r.expectations() {
		if msg := e.compare(); msg != "" {
			res.Failures = append(res.Failures, msg)
		}
	}
	return res, nil
}

// consumer is input number input of node.
type consumer struct {
	node  *runner.Node
	input int
}

type outRef struct {
	n   *runner.Node
	tag string
}

type testRun struct {
	plan      *runner.Plan
	test      *Test
	diags     diag.List
	mockOut   map[outRef]*schemas.Batch
	mocked    map[*runner.Node]bool
	mockIn    map[*runner.Node]*schemas.Batch
	expIn     map[*runner.Node]*expectation
	expOut    map[outRef]*expectation
	needed    map[*runner.Node]bool
	consumers map[outRef][]consumer
	order     []*expectation
}

// prepare resolves the test's names, builds the mocks and works out what must run.
func (r *testRun) prepare() {
	for _, n := range r.plan.Nodes {
		for i, e := range n.Inputs {
			k := outRef{e.From, e.Tag}
			r.consumers[k] = append(r.consumers[k], consumer{n, i})
		}
	}
	for _, m := range r.test.MockOutputs {
		if ref, ok := r.resolveOutput(m); ok {
			if b := r.batch(m, r.outputSchema(ref)); b != nil {
				r.mockOut[ref], r.mocked[ref.n] = b, true
			}
		}
	}
	for _, m := range r.test.MockInputs {
		if n := r.resolveNode(m); n != nil {
			if len(n.Inputs) == 0 {
				r.diags.Add(m.Pos, "%s has no input to mock: mock its output with mock_outputs", n.Describe())
			} else if b := r.batch(m, r.inputSchema(n)); b != nil {
				r.mockIn[n] = b
			}
		}
	}
	for _, x := range r.test.ExpectedInputs {
		if n := r.resolveNode(x); n != nil && len(n.Inputs) == 0 {
			r.diags.Add(x.Pos, "%s is a source and receives nothing: use expected_outputs", n.Describe())
		} else if n != nil {
			in := n.Inputs[0]
			out, _ := in.From.Output(in.Tag)
			e := r.expectation(x, "receives", out.Schema, out.Errors)
			r.expIn[n] = e
			if r.mockIn[n] == nil {
				for _, in := range n.Inputs {
					r.need(in.From)
				}
			}
		}
	}
	for _, x := range r.test.ExpectedOutputs {
		if ref, ok := r.resolveOutput(x); ok {
			out, _ := ref.n.Output(ref.tag)
			r.expOut[ref] = r.expectation(x, "emits on "+ref.tag, out.Schema, out.Errors)
			r.need(ref.n)
		}
	}
	r.checkRunnable()
}

// need marks n as one to run, and what it consumes, up to the mocks.
func (r *testRun) need(n *runner.Node) {
	if r.needed[n] {
		return
	}
	r.needed[n] = true
	if r.mocked[n] || r.mockIn[n] != nil {
		return
	}
	for _, in := range n.Inputs {
		r.need(in.From)
	}
}

// checkRunnable rejects what a test cannot run: real sources (other than Create and the
// allowed ones), sinks whose outputs are used, and unmocked outputs of mocked transforms.
func (r *testRun) checkRunnable() {
	allowed := map[string]bool{"Create": true}
	for _, s := range r.test.AllowedSources {
		allowed[s] = true
	}
	for _, n := range r.plan.Nodes {
		if !r.needed[n] {
			continue
		}
		switch {
		case r.mocked[n]:
			for _, c := range r.usedOutputs(n) {
				if r.mockOut[c] == nil {
					r.diags.Add(r.test.Pos, "test %q mocks %s but not its output %s.%s, which is used", r.test.Name, n.Describe(), n.Name, c.tag).
						Detail = "when one output of a transform is mocked, mock every output of it that is used"
				}
			}
		case r.mockIn[n] != nil:
		case n.Spec.Kind == component.KindSource && !allowed[n.Name] && !allowed[n.Type]:
			r.diags.Add(r.test.Pos, "test %q needs the source %s, which it does not mock", r.test.Name, n.Describe()).
				Detail = fmt.Sprintf("give its output with mock_outputs: [{name: %s, elements: [...]}], or list it in allowed_sources to read it for real", n.Name)
		case n.Spec.Kind == component.KindSink:
			r.diags.Add(r.test.Pos, "test %q needs an output of the sink %s, which a test does not run: mock it", r.test.Name, n.Describe())
		}
	}
}

// usedOutputs returns the outputs of n that a transform to run consumes, or that an
// expectation names.
func (r *testRun) usedOutputs(n *runner.Node) []outRef {
	var out []outRef
	for _, o := range n.Outputs {
		ref := outRef{n, o.Tag}
		used := r.expOut[ref] != nil
		for _, c := range r.consumers[ref] {
			if r.expIn[c.node] != nil && r.mockIn[c.node] == nil || r.needed[c.node] && r.mockIn[c.node] == nil {
				used = true
			}
		}
		if used {
			out = append(out, ref)
		}
	}
	return out
}

// resolveNode finds the transform a test names, by name, else by type when only one
// transform has it.
func (r *testRun) resolveNode(x Elements) *runner.Node {
	n, msg := r.lookup(x.Name)
	if n == nil {
		r.diags.Add(x.Pos, "%s", msg)
	}
	return n
}

func (r *testRun) lookup(name string) (*runner.Node, string) {
	var byName, byType []*runner.Node
	var names []string
	for _, n := range r.plan.Nodes {
		names = append(names, n.Name)
		if n.Name == name {
			byName = append(byName, n)
		}
		if n.Type == name {
			byType = append(byType, n)
		}
	}
	switch {
	case len(byName) == 1:
		return byName[0], ""
	case len(byName) == 0 && len(byType) == 1:
		return byType[0], ""
	case len(byName)+len(byType) > 1:
		return nil, fmt.Sprintf("ambiguous transform %q: several transforms have that name or type; name them apart", name)
	}
	return nil, fmt.Sprintf("no transform %q in the pipeline%s", name, diag.DidYouMean(name, names))
}

// resolveOutput finds the output a test names: NAME (the main output) or NAME.tag.
func (r *testRun) resolveOutput(x Elements) (outRef, bool) {
	n, msg := r.lookup(x.Name)
	tag := ""
	if n == nil {
		if i := strings.LastIndex(x.Name, "."); i > 0 {
			if m, _ := r.lookup(x.Name[:i]); m != nil {
				n, tag = m, x.Name[i+1:]
			}
		}
	}
	if n == nil {
		r.diags.Add(x.Pos, "%s", msg)
		return outRef{}, false
	}
	if tag == "" {
		var main []string
		for _, o := range n.Outputs {
			if !o.Errors {
				main = append(main, o.Tag)
			}
		}
		if len(main) != 1 {
			r.diags.Add(x.Pos, "%s has %s: name one as %s.TAG", n.Describe(), describeOutputs(n), n.Name)
			return outRef{}, false
		}
		tag = main[0]
	}
	if _, ok := n.Output(tag); !ok {
		r.diags.Add(x.Pos, "%s has no output %q (it has %s)", n.Describe(), tag, describeOutputs(n))
		return outRef{}, false
	}
	return outRef{n, tag}, true
}

func describeOutputs(n *runner.Node) string {
	if len(n.Outputs) == 0 {
		return "no outputs"
	}
	tags := make([]string, len(n.Outputs))
	for i, o := range n.Outputs {
		tags[i] = o.Tag
	}
	return "the outputs " + strings.Join(tags, ", ")
}

func (r *testRun) outputSchema(ref outRef) *schemas.Schema {
	o, _ := ref.n.Output(ref.tag)
	return o.Schema
}

// inputSchema is the schema of the first input of n: what mocked and expected inputs are
// read against.
func (r *testRun) inputSchema(n *runner.Node) *schemas.Schema {
	in := n.Inputs[0]
	o, _ := in.From.Output(in.Tag)
	return o.Schema
}

// batch converts a mock's elements to a batch of schema s.
func (r *testRun) batch(m Elements, s *schemas.Schema) *schemas.Batch {
	b := &schemas.Batch{Schema: s}
	for i, el := range m.Elements {
		row, _, err := toTestRow(el, s, false)
		if err != nil {
			r.diags.Add(diag.At(m.Pos.File, el), "element %d of %s: %v", i+1, m.Name, err)
			continue
		}
		b.Rows = append(b.Rows, row)
		b.Pos = append(b.Pos, schemas.Position{Source: "test:" + m.Name, Offset: int64(i)})
		b.Time = append(b.Time, time.Unix(0, 0).UTC())
	}
	return b
}

// toTestRow converts one element to a row of s. With partial, fields the element leaves out
// are not compared: given lists those it has.
func toTestRow(el *yaml.Node, s *schemas.Schema, partial bool) (schemas.Row, map[string]bool, error) {
	var m map[string]any
	if el.Kind != yaml.MappingNode {
		if len(s.Fields) != 1 {
			return nil, nil, fmt.Errorf("a plain value fits only rows of one field; these have %s", s)
		}
		var v any
		if err := el.Decode(&v); err != nil {
			return nil, nil, err
		}
		m = map[string]any{s.Fields[0].Name: v}
	} else if err := el.Decode(&m); err != nil {
		return nil, nil, err
	}
	for k := range m {
		if _, ok := s.Index(k); !ok {
			return nil, nil, fmt.Errorf("field %q is not in the rows %s%s", k, s, diag.DidYouMean(k, s.Names()))
		}
	}
	row := make(schemas.Row, len(s.Fields))
	given := map[string]bool{}
	for i, f := range s.Fields {
		v, ok := m[f.Name]
		given[f.Name] = ok
		if !ok && partial {
			continue
		}
		c, err := schemas.Coerce(v, f.Type, f.Nullable)
		if err != nil {
			return nil, nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		row[i] = c
	}
	return row, given, nil
}

// execute runs the needed transforms, in topological order from the mocks and sources.
func (r *testRun) execute(ctx context.Context) error {
	for _, n := range r.plan.Nodes {
		if !r.needed[n] {
			continue
		}
		switch {
		case r.mocked[n]:
			for _, o := range n.Outputs {
				if b := r.mockOut[outRef{n, o.Tag}]; b != nil {
					if err := r.emitter(ctx, n)(o.Tag, b); err != nil {
						return err
					}
				}
			}
		case r.mockIn[n] != nil:
			b := r.mockIn[n]
			if e := r.expIn[n]; e != nil {
				e.add(b)
			}
			if tr, ok := n.Impl.(component.Transform); ok {
				if err := tr.Process(ctx, 0, b, r.emitter(ctx, n)); err != nil {
					return n.InStage(err)
				}
			}
		case n.Spec.Kind == component.KindSource:
			if err := r.readSource(ctx, n); err != nil {
				return n.InStage(err)
			}
		}
	}
	// The input has ended: every window of the groupings fires, upstream ones first.
	for _, n := range r.plan.Nodes {
		if st, ok := n.Impl.(component.Stateful); ok && r.needed[n] && !r.mocked[n] {
			if err := st.Fire(ctx, nil, true, r.emitter(ctx, n)); err != nil {
				return n.InStage(err)
			}
		}
	}
	return nil
}

// readSource reads an allowed source to its end.
func (r *testRun) readSource(ctx context.Context, n *runner.Node) error {
	src := n.Impl.(component.Source)
	if err := src.Open(ctx, nil); err != nil {
		return err
	}
	defer src.Close()
	return componenttest.ReadAll(ctx, src, r.emitter(ctx, n))
}

// emitter hands what n emits to the expectations on it and to the consumers that run.
func (r *testRun) emitter(ctx context.Context, n *runner.Node) component.Emit {
	return func(tag string, b *schemas.Batch) error {
		ref := outRef{n, tag}
		if e := r.expOut[ref]; e != nil {
			e.add(b)
		}
		for _, c := range r.consumers[ref] {
			if e := r.expIn[c.node]; e != nil && r.mockIn[c.node] == nil {
				e.add(b)
			}
			if !r.needed[c.node] || r.mocked[c.node] || r.mockIn[c.node] != nil || c.node.Spec.Kind == component.KindSink {
				continue
			}
			if err := c.node.Impl.(component.Transform).Process(ctx, c.input, b, r.emitter(ctx, c.node)); err != nil {
				return c.node.InStage(err)
			}
		}
		return nil
	}
}
