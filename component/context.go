package component

import (
	"time"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Input is one input of a component being built.
type Input struct {
	// Name is the key of a named input, or the reference text of a positional one.
	Name   string
	Schema *schemas.Schema
	// Named says that the input was written as a mapping of names (`input: {left: a, right:
	// b}`), so Name is its key: a Join refers to its inputs by these names.
	Named bool
	// Unbounded says that a source upstream of the input may never end by itself (one that
	// implements Bounded, such as ReadFromKafka): a grouping in the global window would then
	// never fire, so a Join refuses it, as Beam does.
	Unbounded bool
}

// Output is one output a component declares while it is built.
type Output struct {
	Tag    string
	Schema *schemas.Schema
	// Errors marks the error_handling output.
	Errors bool
	// From names the service that alone knows Schema, when the pipeline is checked Offline
	// and Schema is nil (OutputFromService).
	From string
}

// Context is what a component sees while it is built: its config node, its inputs' schemas
// and the runner options. The component reports problems with Errorf and declares its outputs
// with Output; the runner builds every component once, at validation time.
type Context struct {
	// Decoder decodes config nodes and knows the file being read.
	*Decoder
	// Type and Name are the component's type and its name in the pipeline (Name defaults to
	// Type).
	Type, Name string
	// Pos is the position of the component in the file.
	Pos diag.Pos
	// Config is the component's config mapping; nil when it has none.
	Config  *yaml.Node
	Inputs  []Input
	Options Options
	// Exprs compiles expressions for connectors that take one (WriteToKafka's key), so
	// that connectors need not import the transforms.
	Exprs Expressions
	// Windowing is the windowing in effect for the transform's input (Beam's push-down of
	// the file's windowing: keys), decoded and checked by the runner; nil for the global
	// window.
	Windowing Windowing
	// Offline says that the pipeline is only checked (sluice validate, graph, diff): building
	// must not connect to anything nor create a file or directory. Reading a local file the
	// config names (a descriptor set, a schema file) is fine. What only a service can tell
	// (a table's columns, a registry subject's latest schema) is declared with
	// OutputFromService and checked when the pipeline runs, or by validate --check-services.
	Offline bool

	outputs []Output
	trigger time.Duration
}

// SetTrigger asks for epochs of at most d, for a sink whose config sets how often it commits
// (triggering_frequency_seconds). The runner cuts epochs at the shortest interval asked for,
// or at options.checkpoint_interval when no sink asks.
func (c *Context) SetTrigger(d time.Duration) { c.trigger = d }

// Trigger returns the interval set by SetTrigger, or 0.
func (c *Context) Trigger() time.Duration { return c.trigger }

// Windowing is a windowing spec as the runner decodes it from a pipeline file, once per
// windowing: key. Its one implementation is transforms/window.Spec, which the transforms that
// group by window read it as; the contract only carries it, so that it need not know the
// kinds of window.
type Windowing interface {
	// WindowType is the kind of window: global, fixed, sliding or sessions.
	WindowType() string
}

// Expressions compiles expressions against a schema.
type Expressions interface {
	// Compile compiles e (in language, "" for the default) against rows of in and returns
	// a function that evaluates it and the type of its result. A compile error is a
	// diagnostic positioned inside e.
	Compile(e Expr, in *schemas.Schema, language string) (RowFunc, schemas.Type, error)
}

// RowFunc evaluates a compiled expression on one row. It is safe for concurrent use.
type RowFunc func(row schemas.Row) (any, error)

// Input returns the schema of the first input, or nil for a component without inputs.
func (c *Context) Input() *schemas.Schema {
	if len(c.Inputs) == 0 {
		return nil
	}
	return c.Inputs[0].Schema
}

// Output declares an output with its schema.
func (c *Context) Output(tag string, s *schemas.Schema) {
	c.outputs = append(c.outputs, Output{Tag: tag, Schema: s})
}

// OutputFromService declares an output whose schema only a service can tell, while the
// pipeline is checked Offline; from names it ("the catalog of table db.events"). The runner
// checks the transforms that consume the output for their config only, and says so.
func (c *Context) OutputFromService(tag, from string) {
	c.outputs = append(c.outputs, Output{Tag: tag, From: from})
}

// Outputs returns the outputs declared so far.
func (c *Context) Outputs() []Output { return c.outputs }

// Describe names the component for messages: "MapToFields 'enrich'", or just the type.
func (c *Context) Describe() string {
	if c.Name == "" || c.Name == c.Type {
		return c.Type
	}
	return c.Type + " '" + c.Name + "'"
}

// KeyPos returns the position of the value of config key, or of the component when the key
// is absent.
func (c *Context) KeyPos(key string) diag.Pos {
	if v := MappingValue(c.Config, key); v != nil {
		return c.At(v)
	}
	if c.Config != nil {
		return c.At(c.Config)
	}
	return c.Pos
}

// MappingValue returns the value node of key in a mapping node, or nil.
func MappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
