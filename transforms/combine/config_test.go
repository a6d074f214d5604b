package combine

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

// Beam's three shorthands for one combined output mean the same.
func TestCombineShorthands(t *testing.T) {
	forms := []string{
		"config: {group_by: user, combine: {n: sum}}",
		"config: {group_by: [user], combine: {n: {value: n, fn: sum}}}",
		"config:\n  group_by: [user]\n  combine:\n    n:\n      value: n\n      fn:\n        type: sum",
	}
	in := []click{{"a", int64(1), 0, 1}, {"a", int64(2), 0, 2}, {"b", int64(5), 0, 3}}
	for _, src := range forms {
		p := mustBuild(t, "Combine", src, clicks)
		if got := p.Out.String(); got != "{user string, n integer?}" {
			t.Errorf("%s: schema %s", src, got)
		}
		st := p.NewState(window.Fn{})
		add(t, p, st, in...)
		rows := p.Rows(st.Fire(window.MaxWatermark)).Rows
		if !reflect.DeepEqual(rows, []schemas.Row{{"a", int64(3)}, {"b", int64(5)}}) {
			t.Errorf("%s: rows %v", src, rows)
		}
	}
}

// Output types as Beam gives them, and what every function makes of the same values.
func TestCombineFunctions(t *testing.T) {
	p := mustBuild(t, "Combine", `config:
  group_by: []
  combine:
    total: {value: n, fn: sum}
    fsum: {value: price, fn: sum}
    mixed: {value: 'n ?? 0.5', fn: sum}
    count: {value: n, fn: count}
    lo: {value: n, fn: min}
    hi: {value: user, fn: max}
    avg: {value: n, fn: mean}
    every: {value: ok, fn: all}
    some: {value: 'n == 2', fn: any}
    list: {value: n, fn: group}
    text: {value: user, fn: concat}
    lists: {value: '[user]', fn: concat}`, clicks)
	want := "{total integer?, fsum number, mixed any?, count integer, lo integer?, hi string, avg number?, every boolean, some boolean, list array<integer>, text string, lists array<string>}"
	if got := p.Out.String(); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	st := p.NewState(window.Fixed(time.Minute, 0))
	add(t, p, st, click{"b", int64(2), 1.5, 1}, click{"a", nil, 2, 2}, click{"c", int64(4), 0.25, 3})
	rows := p.Rows(st.Fire(window.MaxWatermark))
	wantRow := schemas.Row{int64(6), 3.75, 6.5, int64(3), int64(2), "c", 3.0, false, true,
		[]any{int64(2), nil, int64(4)}, "bac", []any{"b", "a", "c"}}
	if len(rows.Rows) != 1 || !reflect.DeepEqual(rows.Rows[0], wantRow) {
		t.Errorf("row\n got %#v\nwant %#v", rows.Rows, wantRow)
	}
	if rows.Time[0] != time.Unix(59, 999e6).UTC() {
		t.Errorf("output event time %v, want the window's last millisecond", rows.Time[0])
	}
	// Every value null: sum, min and mean are null; count counts the records.
	st = p.NewState(window.Fn{})
	add(t, p, st, click{"a", nil, 0, 1})
	r := p.Rows(st.Fire(window.MaxWatermark)).Rows[0]
	if r[0] != nil || r[3] != int64(1) || r[4] != nil || r[6] != nil {
		t.Errorf("all null: %v", r)
	}
}

func TestSumOverflow(t *testing.T) {
	p := mustBuild(t, "Combine", "config: {group_by: user, combine: {n: sum, c: {value: n, fn: count}}, error_handling: {output: bad}}", clicks)
	st := p.NewState(window.Fn{})
	var bad []schemas.Row
	emit := func(tag string, b *schemas.Batch) error { bad = append(bad, b.Rows...); return nil }
	stats, err := p.AddBatch(st, batchOf(click{"a", int64(math.MaxInt64 - 1), 0, 1}, click{"a", int64(5), 0, 2}, click{"a", int64(1), 0, 3}), emit)
	if err != nil || stats.Failed != 1 || stats.Added != 2 {
		t.Fatalf("%+v %v", stats, err)
	}
	if len(bad) != 1 || bad[0][1] != "Combine 'step': sum: the sum overflows a 64-bit integer" {
		t.Errorf("error rows %v", bad)
	}
	// The failed record changed nothing: the count did not see it either.
	if r := p.Rows(st.Fire(window.MaxWatermark)).Rows[0]; r[1] != int64(math.MaxInt64) || r[2] != int64(2) {
		t.Errorf("row %v", r)
	}
}

// Without error_handling a failing record stops with its position; late records are
// dropped but counted. With it, both go to the error output.
func TestAddBatchErrors(t *testing.T) {
	anyIn := schemas.New(schemas.Field{Name: "user", Type: typ(schemas.String)}, schemas.Field{Name: "v", Type: typ(schemas.Any), Nullable: true})
	rows := &schemas.Batch{Schema: anyIn, Rows: []schemas.Row{{"a", int64(1)}, {"a", "x"}},
		Pos:  []schemas.Position{{Source: "kafka:t", Partition: 2, Offset: 40}, {Source: "kafka:t", Partition: 2, Offset: 41}},
		Time: []time.Time{time.Unix(1, 0), time.Unix(2, 0)}}
	p := mustBuild(t, "Combine", "config: {group_by: user, combine: {v: sum}}", anyIn)
	_, err := p.AddBatch(p.NewState(window.Fn{}), rows, noEmit(t))
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 41 || !strings.Contains(err.Error(), `sum: cannot combine the string "x": it is not a number`) {
		t.Errorf("error %v", err)
	}

	p = mustBuild(t, "Combine", "config: {group_by: user, combine: {n: sum}, error_handling: {output: bad}}", clicks)
	st := p.NewState(window.Fixed(10*time.Second, 0))
	add(t, p, st, click{"a", int64(1), 0, 1})
	st.Fire(10 * sec)
	var bad []schemas.Row
	stats, err := p.AddBatch(st, batchOf(click{"a", int64(1), 0, 2}), func(_ string, b *schemas.Batch) error { bad = append(bad, b.Rows...); return nil })
	if err != nil || stats.Late != 1 || len(bad) != 1 ||
		bad[0][1] != "Combine 'step': late record: its event time 1970-01-01T00:00:02Z is in a window that closed at watermark 1970-01-01T00:00:10Z" {
		t.Errorf("late with error_handling: %+v %v %v", stats, err, bad)
	}
}

func TestGroupByKey(t *testing.T) {
	in := []click{{"a", int64(1), 1.5, 1}, {"b", int64(2), 2.5, 2}, {"a", nil, 3.5, 3}}
	tests := []struct {
		config, schema string
		rows           []schemas.Row
	}{
		{"config: {key: user, values: price}", "{key string, values array<number>}",
			[]schemas.Row{{"a", []any{1.5, 3.5}}, {"b", []any{2.5}}}},
		{"config: {key: 'upper(user)', values: [n, ok]}", "{key string, values array<struct<n integer, ok boolean>>}",
			[]schemas.Row{{"A", []any{map[string]any{"n": int64(1), "ok": true}, map[string]any{"n": nil, "ok": false}}},
				{"B", []any{map[string]any{"n": int64(2), "ok": true}}}}},
		{"config: {key: 'n ?? 0'}", "{key integer, values array<struct<user string, n integer, price number, ok boolean>>}",
			[]schemas.Row{{int64(0), []any{map[string]any{"user": "a", "n": nil, "price": 3.5, "ok": false}}},
				{int64(1), []any{map[string]any{"user": "a", "n": int64(1), "price": 1.5, "ok": true}}},
				{int64(2), []any{map[string]any{"user": "b", "n": int64(2), "price": 2.5, "ok": true}}}}},
	}
	for _, tt := range tests {
		p := mustBuild(t, "GroupByKey", tt.config, clicks)
		if got := p.Out.String(); got != tt.schema {
			t.Errorf("%s: schema %s", tt.config, got)
		}
		st := p.NewState(window.Fn{})
		add(t, p, st, in...)
		if got := p.Rows(st.Fire(window.MaxWatermark)).Rows; !reflect.DeepEqual(got, tt.rows) {
			t.Errorf("%s: rows\n got %v\nwant %v", tt.config, got, tt.rows)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ typ, config, want string }{
		{"Combine", "config: {group_by: usr, combine: {n: sum}}", `p.yaml:1:20: unknown field "usr" in group_by (did you mean "user"?)`},
		{"Combine", "config: {group_by: user, combine: {n: summ}}", `p.yaml:1:39: unknown combine function "summ" (did you mean "sum"?)` + "\n\thint: sluice's combine functions are"},
		{"Combine", "config: {group_by: user, combine: {n: {fn: {type: sum, config: {x: 1}}}}}", `p.yaml:1:64: combine function sum takes no config`},
		{"Combine", "config: {group_by: user, combine: {user: sum}}", `p.yaml:1:42: combine user: sum needs numbers, but the values are of type string`},
		{"Combine", "config: {group_by: user, combine: {x: {value: user, fn: mean}}}", `p.yaml:1:57: combine x: mean needs numbers`},
		{"Combine", "config: {group_by: user, combine: {x: {value: price, fn: all}}}", `p.yaml:1:58: combine x: all needs booleans`},
		{"Combine", "config: {group_by: user, combine: {user: {value: n, fn: sum}}}", `p.yaml:1:36: output field "user" is also a group_by field`},
		{"Combine", "config: {group_by: user, combine: {tot: sum}}", `p.yaml:1:36: unknown field "tot" in the expression`},
		{"Combine", "config: {group_by: user, combine: {x: {valu: n, fn: sum}}}", `p.yaml:1:40: unknown key "valu" in combine x (did you mean "value"?)`},
		{"Combine", "config: {group_by: user, combine: []}", `p.yaml:1:35: combine must map output fields to combine functions`},
		{"Combine", "config: {combine: {n: sum}}", `p.yaml:1:9: Combine 'step' needs key "group_by"`},
		{"Combine", "config: {group_by: user, language: sql, combine: {n: sum}}", `p.yaml:1:36: language "sql" is not supported`},
		{"GroupByKey", "config: {key: usr}", `p.yaml:1:15: unknown field "usr" in the expression (did you mean "user"?)`},
		{"GroupByKey", "config: {key: user, values: [price, nn]}", `p.yaml:1:37: unknown field "nn" in values (did you mean "n"?)`},
	}
	for _, tt := range tests {
		_, _, err := build(t, tt.typ, tt.config, clicks)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.config, err, tt.want)
		}
	}
}

func TestErrorOutputDeclared(t *testing.T) {
	_, outs, err := build(t, "Combine", "config: {group_by: user, combine: {n: sum}, error_handling: {output: bad}}", clicks)
	if err != nil || len(outs) != 2 || outs[0].Tag != component.Main || outs[1].Tag != "bad" || !outs[1].Errors {
		t.Errorf("outputs %+v, %v", outs, err)
	}
}

// Accumulators encode and decode to themselves, and merge as if they had seen both streams.
func TestAccumulatorsRoundTrip(t *testing.T) {
	values := []any{int64(3), nil, int64(-7), int64(12)}
	for _, fn := range FnNames() {
		f, _ := ParseFn(fn)
		agg := Agg{Fn: f, In: typ(schemas.Int64), Nullable: true, N: 2}
		if f == All || f == Any {
			agg.In = typ(schemas.Bool)
		}
		if f == Concat {
			agg.In = schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.Int64}}
		}
		conv := func(v any) any {
			switch {
			case v == nil:
				return nil
			case agg.In.Kind == schemas.Bool:
				return v.(int64) > 0
			case agg.In.Kind == schemas.Array:
				return []any{v}
			}
			return v
		}
		whole, a, b := agg.New(), agg.New(), agg.New()
		for i, v := range values {
			v = conv(v)
			if f == Latest || f == Sample { // State.Add stamps their values with the event time
				v = stamped{int64(i) * sec, v}
			}
			whole.Add(v)
			if i < 2 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Result(), whole.Result()) {
			t.Errorf("%s: merged %v, whole %v", fn, a.Result(), whole.Result())
		}
		enc, err := whole.appendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		back := agg.New()
		d := newDecoder(enc)
		back.readFrom(d)
		if d.Err != nil || len(d.B) != 0 || !reflect.DeepEqual(back.Result(), whole.Result()) || back.size() != whole.size() {
			t.Errorf("%s: decoded %v (%v), want %v", fn, back.Result(), d.Err, whole.Result())
		}
	}
}

func TestValueCodec(t *testing.T) {
	vals := []any{nil, true, false, int64(-5), 2.5, "héllo", []byte{0, 1}, time.Unix(5, 7).UTC(),
		[]any{int64(1), "x", []any{}}, map[string]any{"b": int64(1), "a": []any{nil}}}
	for _, v := range vals {
		enc, err := appendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		d := newDecoder(enc)
		if got := d.value(); !reflect.DeepEqual(got, v) || len(d.B) != 0 || d.Err != nil {
			t.Errorf("%#v decoded as %#v", v, got)
		}
	}
	if _, err := appendValue(nil, struct{}{}); err == nil {
		t.Error("encoded an unsupported value")
	}
	if compare(int64(2), 2.5) >= 0 || compare(3.0, int64(3)) != 0 || compare(int64(math.MaxInt64), float64(math.MaxInt64)) >= 0 || compare(nil, false) >= 0 {
		t.Error("compare")
	}
}
