package component

import (
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/sluicehq/sluice/internal/diag"
)

// Kind says what a component is.
type Kind int

// The kinds of component.
const (
	KindTransform Kind = iota
	KindSource
	KindSink
)

func (k Kind) String() string {
	return [...]string{"transform", "source", "sink"}[k]
}

// Spec describes a registered component: its name, documentation and config type. The config
// type drives validation, `sluice schema` and the docs.
type Spec struct {
	Name    string
	Kind    Kind
	Summary string
	// Config is the component's config struct type; see Decode for the tags it reads.
	Config reflect.Type
	// MinInputs and MaxInputs bound the number of inputs (MaxInputs < 0: any number).
	MinInputs, MaxInputs int
	build                func(*Context, any) (any, error)
}

// Build decodes the config node of c into a fresh config and builds the component. It returns
// nil when the config has errors; they are in c's diagnostics.
func (s *Spec) Build(c *Context) any {
	cfg := reflect.New(s.Config)
	if d, ok := cfg.Interface().(interface{ SetDefaults() }); ok {
		d.SetDefaults()
	}
	before := len(*c.Diags)
	c.decodeConfig(cfg)
	if len(*c.Diags) > before {
		return nil
	}
	impl, err := s.build(c, cfg.Interface())
	if err != nil {
		c.Errorf(c.Pos, "%v", err)
		return nil
	}
	if len(*c.Diags) > before {
		return nil
	}
	return impl
}

// CheckConfig only decodes the config of c, reporting its problems, for a component that
// cannot be built because an input failed: the user still sees every config problem at once.
func (s *Spec) CheckConfig(c *Context) {
	cfg := reflect.New(s.Config)
	if d, ok := cfg.Interface().(interface{ SetDefaults() }); ok {
		d.SetDefaults()
	}
	c.decodeConfig(cfg)
}

var (
	mu       sync.RWMutex
	registry = map[string]*Spec{}
)

func register(s *Spec) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[s.Name]; dup {
		panic("component: registered twice: " + s.Name)
	}
	registry[s.Name] = s
}

func typed[C, T any](build func(*Context, *C) (T, error)) func(*Context, any) (any, error) {
	return func(c *Context, cfg any) (any, error) {
		t, err := build(c, cfg.(*C))
		return t, err
	}
}

// Inputs bounds the number of inputs of a transform.
type Inputs struct{ Min, Max int }

// RegisterTransform registers a transform type with config C. It panics on a duplicate name.
func RegisterTransform[C any](name, summary string, in Inputs, build func(*Context, *C) (Transform, error)) {
	register(&Spec{Name: name, Kind: KindTransform, Summary: summary, Config: reflect.TypeFor[C](),
		MinInputs: in.Min, MaxInputs: in.Max, build: typed(build)})
}

// RegisterSource registers a source type with config C. It panics on a duplicate name.
func RegisterSource[C any](name, summary string, build func(*Context, *C) (Source, error)) {
	register(&Spec{Name: name, Kind: KindSource, Summary: summary, Config: reflect.TypeFor[C](),
		build: typed(build)})
}

// RegisterSink registers a sink type with config C. It panics on a duplicate name.
func RegisterSink[C any](name, summary string, build func(*Context, *C) (Sink, error)) {
	register(&Spec{Name: name, Kind: KindSink, Summary: summary, Config: reflect.TypeFor[C](),
		MinInputs: 1, MaxInputs: -1, build: typed(build)})
}

// Lookup returns the component registered under name.
func Lookup(name string) (*Spec, bool) {
	mu.RLock()
	defer mu.RUnlock()
	s, ok := registry[name]
	return s, ok
}

// Unknown returns the error for a type that is not registered, with a suggestion.
func Unknown(name string) string {
	return fmt.Sprintf("unknown transform type %q%s", name, diag.DidYouMean(name, Names()))
}

// Names returns the registered names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns the registered specs, sorted by name.
func All() []*Spec {
	var out []*Spec
	for _, n := range Names() {
		s, _ := Lookup(n)
		out = append(out, s)
	}
	return out
}
