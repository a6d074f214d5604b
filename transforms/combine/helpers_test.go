package combine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

const sec = int64(time.Second)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

// clicks is the input schema of most tests: who clicked, how much, at what price.
var clicks = schemas.New(
	schemas.Field{Name: "user", Type: typ(schemas.String)},
	schemas.Field{Name: "n", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "price", Type: typ(schemas.Float64)},
	schemas.Field{Name: "ok", Type: typ(schemas.Bool)},
)

// build builds a Combine (or, with typ GroupByKey, a GroupByKey) from a snippet whose config
// key is used, as the runner would.
func build(t testing.TB, typ, src string, in *schemas.Schema) (*Plan, []component.Output, error) {
	t.Helper()
	d, root := componenttest.Env{Name: "step"}.Parse(t, src)
	ctx := &component.Context{Decoder: d, Type: typ, Name: "step", Pos: d.At(root),
		Config: component.MappingValue(root, "config"), Inputs: []component.Input{{Name: "in", Schema: in}}}
	var p *Plan
	switch typ {
	case "Combine":
		var cfg CombineConfig
		if d.Decode(ctx.Config, &cfg, ctx.Describe()) {
			p, _ = BuildCombine(ctx, &cfg)
		}
	case "GroupByKey":
		var cfg GroupByKeyConfig
		if d.Decode(ctx.Config, &cfg, ctx.Describe()) {
			p, _ = BuildGroupByKey(ctx, &cfg)
		}
	}
	return p, ctx.Outputs(), d.Diags.Err()
}

func mustBuild(t testing.TB, typ, src string, in *schemas.Schema) *Plan {
	t.Helper()
	p, _, err := build(t, typ, src, in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// click is one input record at event time at (seconds).
type click struct {
	user  string
	n     any
	price float64
	at    int64
}

func batchOf(cs ...click) *schemas.Batch {
	b := &schemas.Batch{Schema: clicks}
	for i, c := range cs {
		b.Rows = append(b.Rows, schemas.Row{c.user, c.n, c.price, c.n != nil})
		b.Pos = append(b.Pos, schemas.Position{Source: "kafka:clicks", Partition: 0, Offset: int64(i)})
		b.Time = append(b.Time, time.Unix(c.at, 0).UTC())
	}
	return b
}

// add adds the clicks to st and fails on any error.
func add(t testing.TB, p *Plan, st *State, cs ...click) Stats {
	t.Helper()
	stats, err := p.AddBatch(st, batchOf(cs...), noEmit(t))
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

func noEmit(t testing.TB) component.Emit {
	return func(tag string, b *schemas.Batch) error {
		t.Errorf("unexpected emit on %s: %v", tag, b.Rows)
		return nil
	}
}

// show renders results as "key [start, end) values" lines, the way the tests compare them.
func show(rs []Result) string {
	var lines []string
	for _, r := range rs {
		lines = append(lines, fmt.Sprintf("%v %s %v", r.Key, r.Window, r.Values))
	}
	return strings.Join(lines, "\n")
}

var ctx = context.Background()

var _ = window.Global
