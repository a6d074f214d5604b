package combine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
	_ "github.com/sluicehq/sluice/transforms/python" // language: python
	"github.com/sluicehq/sluice/transforms/window"
)

// scores: who scored how much, when (seconds); the rows every test below combines.
var scores = []click{
	{"a", int64(3), 0.5, 1}, {"b", int64(1), 2.5, 2}, {"a", int64(9), 1.5, 3},
	{"a", nil, 4.5, 4}, {"b", int64(7), 0.25, 5}, {"a", int64(5), 3.5, 6}, {"a", int64(9), 9.5, 7},
}

// combineAll builds a Combine, adds the rows and returns the output rows of one global window.
func combineAll(t *testing.T, src string, cs ...click) []schemas.Row {
	t.Helper()
	p := mustBuild(t, "Combine", src, clicks)
	st := p.NewState(window.Fn{})
	add(t, p, st, cs...)
	return p.Rows(st.Fire(window.MaxWatermark)).Rows
}

// Beam's short names and Python paths of the same function give the same rows.
func TestBeamFunctionNames(t *testing.T) {
	tests := []struct {
		fn, schema string
		want       []schemas.Row
	}{
		{"{type: top, config: {n: 2}}", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(9), int64(9)}}, {"b", []any{int64(7), int64(1)}}}},
		{"{type: apache_beam.transforms.combiners.TopCombineFn, config: {n: 2}}", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(9), int64(9)}}, {"b", []any{int64(7), int64(1)}}}},
		{"{type: top, config: {n: 3, reverse: true}}", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(3), int64(5), int64(9)}}, {"b", []any{int64(1), int64(7)}}}},
		// Ordered by price, the values are n: a's two dearest are 9 (9.5) and nil (4.5).
		{"{type: top, config: {n: 2, key: price}}", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(9), nil}}, {"b", []any{int64(1), int64(7)}}}},
		{"{type: top, config: {n: 1, key: '-price', reverse: false}}", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(3)}}, {"b", []any{int64(7)}}}},
		{"latest", "{user string, x integer?}", []schemas.Row{{"a", int64(9)}, {"b", int64(7)}}},
		{"apache_beam.transforms.combiners.LatestCombineFn", "{user string, x integer?}", []schemas.Row{{"a", int64(9)}, {"b", int64(7)}}},
		{"to_list", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(3), int64(9), nil, int64(5), int64(9)}}, {"b", []any{int64(1), int64(7)}}}},
		{"apache_beam.transforms.combiners.ToListCombineFn", "{user string, x array<integer>}", []schemas.Row{{"a", []any{int64(3), int64(9), nil, int64(5), int64(9)}}, {"b", []any{int64(1), int64(7)}}}},
		{"apache_beam.transforms.combiners.CountCombineFn", "{user string, x integer}", []schemas.Row{{"a", int64(5)}, {"b", int64(2)}}},
		{"apache_beam.transforms.combiners.MeanCombineFn", "{user string, x number?}", []schemas.Row{{"a", 6.5}, {"b", 4.0}}},
		{"{type: sample, config: {n: 10}}", "{user string, x array<integer>}", nil}, // checked below
	}
	for _, tt := range tests {
		src := "config: {group_by: user, combine: {x: {value: n, fn: " + tt.fn + "}}}"
		p := mustBuild(t, "Combine", src, clicks)
		if got := p.Out.String(); got != tt.schema {
			t.Errorf("%s: schema %s, want %s", tt.fn, got, tt.schema)
		}
		if tt.want == nil {
			continue
		}
		if got := combineAll(t, src, scores...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: rows\n got %v\nwant %v", tt.fn, got, tt.want)
		}
	}
}

// A sample of n is n of the values, the same ones whatever the order of the records, and
// all of them when there are no more than n.
func TestSampleIsDeterministic(t *testing.T) {
	src := "config: {group_by: [], combine: {x: {value: n, fn: {type: sample, config: {n: 3}}}}}"
	var many []click
	for i := range 50 {
		many = append(many, click{"u", int64(i), 0, int64(i)})
	}
	first := combineAll(t, src, many...)
	got := first[0][0].([]any)
	if len(got) != 3 {
		t.Fatalf("sample of 3 has %d values: %v", len(got), got)
	}
	seen := map[any]bool{}
	for _, v := range got {
		if i, ok := v.(int64); !ok || i < 0 || i >= 50 || seen[v] {
			t.Errorf("sample %v is not 3 of the values", got)
		}
		seen[v] = true
	}
	for seed := range uint64(5) {
		if again := combineAll(t, src, shuffled(many, seed)...); !reflect.DeepEqual(again, first) {
			t.Errorf("shuffled (%d): sample %v, want %v", seed, again, first)
		}
	}
	if all := combineAll(t, src, many[:2]...); len(all[0][0].([]any)) != 2 {
		t.Errorf("sample of 2 values: %v", all)
	}
}

// A Python function (a, b) -> value is applied pairwise over the non-null values.
func TestPythonFunction(t *testing.T) {
	for _, tt := range []struct{ fn, schema, want string }{
		{`"lambda a, b: a * b"`, "{user string, x integer?}", "[[a 1215] [b 7]]"},
		{`{type: "lambda a, b: a if a > b else b"}`, "{user string, x integer?}", "[[a 9] [b 7]]"},
		{"|\n          def join(a, b):\n            return a + ',' + b", "{user string, x string}", "[[a a,a,a,a,a] [b b,b]]"},
	} {
		value := "n"
		if strings.Contains(tt.fn, "join") {
			value = "user"
		}
		src := "config:\n  language: python\n  group_by: user\n  combine:\n    x:\n      value: " + value + "\n      fn: " + tt.fn
		p, _, err := build(t, "Combine", src, clicks)
		if err != nil {
			t.Errorf("%s: %v", tt.fn, err)
			continue
		}
		if got := p.Out.String(); got != tt.schema {
			t.Errorf("%s: schema %s, want %s", tt.fn, got, tt.schema)
		}
		st := p.NewState(window.Fn{})
		add(t, p, st, scores...)
		if got := p.Rows(st.Fire(window.MaxWatermark)).Rows; fmt.Sprint(got) != tt.want {
			t.Errorf("%s: rows %v, want %s", tt.fn, got, tt.want)
		}
	}
}

// A failing Python function sends the record to the error output, leaving the combined
// value as it was.
func TestPythonFunctionFails(t *testing.T) {
	src := "config:\n  language: python\n  group_by: user\n  combine:\n    x:\n      value: n\n      fn: 'lambda a, b: a // (b - 7)'\n  error_handling: {output: bad}"
	p := mustBuild(t, "Combine", src, clicks)
	st := p.NewState(window.Fn{})
	var bad []schemas.Row
	stats, err := p.AddBatch(st, batchOf(click{"b", int64(20), 0, 1}, click{"b", int64(7), 0, 2}, click{"b", int64(9), 0, 3}),
		func(_ string, b *schemas.Batch) error { bad = append(bad, b.Rows...); return nil })
	if err != nil || stats.Failed != 1 || len(bad) != 1 || !strings.Contains(bad[0][1].(string), "ZeroDivisionError") {
		t.Fatalf("stats %+v, err %v, bad %v", stats, err, bad)
	}
	if got := p.Rows(st.Fire(window.MaxWatermark)).Rows; !reflect.DeepEqual(got, []schemas.Row{{"b", int64(10)}}) {
		t.Errorf("rows %v, want [[b 10]] (20 // (9 - 7))", got)
	}
}

// A checkpoint taken mid-window and restored into a new state resumes every new function:
// the result is the one of a run that was never interrupted.
func TestNewFunctionsResumeFromCheckpoint(t *testing.T) {
	src := `config:
  language: python
  group_by: user
  combine:
    top: {value: n, fn: {type: top, config: {n: 2}}}
    cheapest: {value: user, fn: {type: apache_beam.transforms.combiners.TopCombineFn, config: {n: 2, key: price, reverse: true}}}
    last: {value: price, fn: latest}
    some: {value: n, fn: {type: sample, config: {n: 2}}}
    all: {value: n, fn: to_list}
    product: {value: n, fn: 'lambda a, b: a * b'}`
	p := mustBuild(t, "Combine", src, clicks)
	wf := window.Fixed(10*time.Second, 0)
	whole := p.NewState(wf)
	add(t, p, whole, scores...)
	want := show(whole.Fire(window.MaxWatermark))

	first := p.NewState(wf)
	add(t, p, first, scores[:4]...)
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored := p.NewState(wf)
	if err := restored.Restore(snap); err != nil {
		t.Fatal(err)
	}
	again, _ := restored.Snapshot()
	if string(again) != string(snap) {
		t.Error("a restored state snapshots differently")
	}
	add(t, p, restored, scores[4:]...)
	if got := show(restored.Fire(window.MaxWatermark)); got != want {
		t.Errorf("resumed:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(want, "[a] [0.0, 10.0) [[9 9] [a a] 9.5 ") {
		t.Errorf("unexpected results:\n%s", want)
	}
}

func TestFunctionErrors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"config: {group_by: user, combine: {n: apache_beam.transforms.combiners.ToDictCombineFn}}",
			"p.yaml:1:39: combine function apache_beam.transforms.combiners.ToDictCombineFn is not one sluice runs\n\thint: sluice's combine functions are"},
		{"config: {group_by: user, combine: {n: {fn: mymodule.MyCombineFn}}}",
			"p.yaml:1:44: combine function mymodule.MyCombineFn is not one sluice runs"},
		{"config: {group_by: user, combine: {n: top}}", "p.yaml:1:39: combine function top needs config: {n: how many values to keep}"},
		{"config: {group_by: user, combine: {n: {fn: {type: top, config: {n: 0}}}}}", "p.yaml:1:68: combine function top needs n, how many values to keep, of at least 1"},
		{"config: {group_by: user, combine: {n: {fn: {type: sample, config: {n: 2, key: price}}}}}", "p.yaml:1:79: combine function sample takes only n, not key"},
		{"config: {group_by: user, combine: {n: {fn: {type: top, config: {n: 2, key: nme}}}}}", `p.yaml:1:76: unknown field "nme" in the expression`},
		{"config: {group_by: user, combine: {n: {fn: {type: top, config: {n: 2, size: 3}}}}}", `size`},
		{"config: {group_by: user, combine: {n: 'lambda a, b: a + b'}}", "p.yaml:1:39: a Python function as fn needs language: python"},
		{"config: {language: python, group_by: user, combine: {n: 'lambda vals: sum(vals)'}}", "TypeError: a combine function must take two arguments"},
		{"config: {group_by: user, combine: {n: lates}}", `unknown combine function "lates" (did you mean "latest"?)`},
	} {
		_, _, err := build(t, "Combine", tt.config, clicks)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.config, err, tt.want)
		}
	}
}
