package mapping

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// AssertEqualConfig is the config of AssertEqual.
type AssertEqualConfig struct {
	Elements yaml.Node `yaml:"elements" required:"true" doc:"The rows the input must hold, in any order: mappings (field: value; a field left out is null), or plain values for rows of one field."`
}

func init() {
	component.RegisterTransform("AssertEqual", "Fails the run, with a diff, unless its input holds exactly the elements given, in any order (for tests).",
		component.Inputs{Min: 1, Max: 1}, buildAssertEqual)
}

// assertEqual keeps every row it receives, as JSON, and compares them with the expected
// rows when the input ends. It is stateful so that the runner calls it then (Fire with
// final) and keeps what arrived in earlier epochs in the checkpoints.
type assertEqual struct {
	nodes []*yaml.Node // the expected elements, converted when the input's schema is known
	want  []string     // nil until converted
	mu    sync.Mutex
	got   []string
}

func buildAssertEqual(ctx *component.Context, cfg *AssertEqualConfig) (component.Transform, error) {
	if cfg.Elements.Kind != yaml.SequenceNode {
		ctx.Errorf(ctx.KeyPos("elements"), "elements must be a list")
		return nil, nil
	}
	t := &assertEqual{nodes: cfg.Elements.Content}
	// The input's schema is known unless a service gives it (offline): the elements are
	// checked against it now, so that validate reports a field the input lacks.
	if in := ctx.Input(); in != nil {
		want, err := t.expected(in)
		if err != nil {
			ctx.Errorf(err.pos(ctx), "%v", err.err)
			return nil, nil
		}
		t.want = want
	}
	return t, nil
}

// elementError is a problem with one expected element.
type elementError struct {
	node *yaml.Node
	err  error
}

func (e *elementError) pos(ctx *component.Context) diag.Pos { return ctx.At(e.node) }

// expected converts the expected elements to rows of s, as JSON.
func (t *assertEqual) expected(s *schemas.Schema) ([]string, *elementError) {
	out := make([]string, 0, len(t.nodes))
	for i, n := range t.nodes {
		row, err := elementRow(n, s)
		if err != nil {
			return nil, &elementError{n, fmt.Errorf("element %d: %w", i+1, err)}
		}
		out = append(out, string(schemas.AppendJSON(nil, s, row)))
	}
	return out, nil
}

// elementRow converts one expected element to a row of s: the fields it leaves out are null,
// as Beam's rows compare a missing field and a null one alike.
func elementRow(n *yaml.Node, s *schemas.Schema) (schemas.Row, error) {
	var m map[string]any
	if n.Kind == yaml.MappingNode {
		if err := n.Decode(&m); err != nil {
			return nil, err
		}
	} else {
		if len(s.Fields) != 1 {
			return nil, fmt.Errorf("a plain value fits only rows of one field; the input has %s", s)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		m = map[string]any{s.Fields[0].Name: v}
	}
	for k := range m {
		if _, ok := s.Index(k); !ok {
			return nil, fmt.Errorf("field %q is not in the input's rows %s", k, s)
		}
	}
	row := make(schemas.Row, len(s.Fields))
	for i, f := range s.Fields {
		v, err := schemas.Coerce(m[f.Name], f.Type, true)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		row[i] = v
	}
	return row, nil
}

// Process keeps the rows; it emits nothing.
func (t *assertEqual) Process(_ context.Context, _ int, in *schemas.Batch, _ component.Emit) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want == nil && len(in.Rows) > 0 {
		want, err := t.expected(in.Schema)
		if err != nil {
			return fmt.Errorf("line %d: %w", err.node.Line, err.err)
		}
		t.want = want
	}
	for _, row := range in.Rows {
		t.got = append(t.got, string(schemas.AppendJSON(nil, in.Schema, row)))
	}
	return nil
}

// Fire compares when the input has ended, and fails with a diff when the rows differ.
func (t *assertEqual) Fire(_ context.Context, _ schemas.Offsets, final bool, _ component.Emit) error {
	if !final {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	want := t.want
	if want == nil { // no row arrived and no schema was known: show the elements as written
		for _, n := range t.nodes {
			var v any
			_ = n.Decode(&v)
			b, _ := json.Marshal(v)
			want = append(want, string(b))
		}
	}
	if diff := rowDiff(want, t.got); diff != "" {
		return fmt.Errorf("the input is not the expected elements:\n%s", diff)
	}
	return nil
}

// rowDiff compares rows (as JSON) as multisets and returns what is missing and what is
// unexpected, or "" when they are equal.
func rowDiff(want, got []string) string {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	var unexpected []string
	for _, g := range got {
		if count[g] > 0 {
			count[g]--
		} else {
			unexpected = append(unexpected, g)
		}
	}
	var missing []string
	for _, w := range want {
		if count[w] > 0 {
			count[w]--
			missing = append(missing, w)
		}
	}
	if len(missing) == 0 && len(unexpected) == 0 {
		return ""
	}
	return strings.TrimRight(fmt.Sprintf("  %d arrived, %d expected\n", len(got), len(want))+schemas.RowDiff(missing, unexpected), "\n")
}

// Fired returns nothing: AssertEqual emits no rows.
func (t *assertEqual) Fired() schemas.Offsets { return schemas.Offsets{} }

// Snapshot keeps the rows received so far.
func (t *assertEqual) Snapshot() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return json.Marshal(t.got)
}

// Restore gives back the rows received before a restart.
func (t *assertEqual) Restore(state []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := json.Unmarshal(state, &t.got); err != nil {
		return fmt.Errorf("restoring the rows AssertEqual received: %w", err)
	}
	return nil
}

// Stats returns the size of the rows kept.
func (t *assertEqual) Stats() (int, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, g := range t.got {
		n += len(g)
	}
	return n, 0
}
