package join_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

var (
	orders = schemas.New(field("order", schemas.Int64),
		schemas.Field{Name: "customer", Type: typ(schemas.Int64), Nullable: true}, field("total", schemas.Float64))
	customers = schemas.New(field("id", schemas.Int64), field("who", schemas.String))
	orderRecs = []rec{{1, schemas.Row{int64(1), int64(10), 5.5}}, {1, schemas.Row{int64(2), int64(11), 8.0}},
		{1, schemas.Row{int64(3), int64(99), 1.25}}, {1, schemas.Row{int64(4), nil, 2.0}}, {1, schemas.Row{int64(5), int64(10), 3.0}}}
	customerRecs = []rec{{1, schemas.Row{int64(10), "ada"}}, {1, schemas.Row{int64(11), "bob"}}, {1, schemas.Row{int64(12), "cyd"}}}
)

// Each join type keeps the matches, and pads the unmatched records of the side it keeps
// with nulls; a null key (order 4) matches nothing. The padded side's fields are nullable.
func TestJoinTypes(t *testing.T) {
	matches := []string{"GlobalWindow: 1 10 5.5 10 ada", "GlobalWindow: 2 11 8 11 bob", "GlobalWindow: 5 10 3 10 ada"}
	leftOnly := []string{"GlobalWindow: 3 99 1.25 - -", "GlobalWindow: 4 - 2 - -"}
	rightOnly := []string{"GlobalWindow: - - - 12 cyd"}
	for _, tt := range []struct {
		kind   string
		schema string
		rows   []string
	}{
		{"inner", "order customer? total id who", matches},
		{"left", "order customer? total id? who?", append(append([]string{}, matches...), leftOnly...)},
		{"right", "order? customer? total? id who", append(append([]string{}, matches...), rightOnly...)},
		{"outer", "order? customer? total? id? who?", append(append(append([]string{}, matches...), leftOnly...), rightOnly...)},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			j, out := mustBuild(t, "config: {type: "+tt.kind+", equalities: [{o: customer, c: id}]}",
				in{name: "o", schema: orders}, in{name: "c", schema: customers})
			if got := showSchema(out); got != tt.schema {
				t.Errorf("schema %s, want %s", got, tt.schema)
			}
			feed(t, j, 1, "c", customerRecs...) // the order of the inputs' batches does not matter
			feed(t, j, 0, "o", orderRecs...)
			if got := fire(t, j, false, "o", "c"); len(got) != 0 {
				t.Errorf("the global window fired before the end of input: %v", got)
			}
			same(t, tt.kind, fire(t, j, true), tt.rows)
		})
	}
}

// Three inputs joined on different fields (no key all share): the joins run input after
// input, a left join then an inner one, so a record padded by the first step still joins
// the next one on a field of an earlier input.
func TestMultiWay(t *testing.T) {
	users := schemas.New(field("user", schemas.String), field("team", schemas.String))
	logins := schemas.New(field("login_user", schemas.String), field("day", schemas.String))
	teams := schemas.New(field("name", schemas.String), field("lead", schemas.String))
	j, out := mustBuild(t, `
config:
  type: {outer: [u]}
  equalities:
    - {u: user, l: login_user}
    - {u: team, t: name}
`, in{name: "u", schema: users}, in{name: "l", schema: logins}, in{name: "t", schema: teams})
	if got, want := showSchema(out), "user team login_user? day? name lead"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	feed(t, j, 0, "u", rec{1, schemas.Row{"ann", "red"}}, rec{1, schemas.Row{"ben", "red"}}, rec{1, schemas.Row{"cat", "none"}})
	feed(t, j, 1, "l", rec{1, schemas.Row{"ann", "mon"}}, rec{1, schemas.Row{"ann", "tue"}}, rec{1, schemas.Row{"dan", "wed"}})
	feed(t, j, 2, "t", rec{1, schemas.Row{"red", "rae"}}, rec{1, schemas.Row{"blue", "bo"}})
	same(t, "joined", fire(t, j, true), []string{
		"GlobalWindow: ann red ann mon red rae",
		"GlobalWindow: ann red ann tue red rae",
		"GlobalWindow: ben red - - red rae",
	})
}

// An integer field joins a number field on equal values; fields: selects and renames, and
// a name an unlisted input repeats gets Beam's suffix.
func TestFieldsAndNumbers(t *testing.T) {
	a := schemas.New(field("k", schemas.Int64), field("v", schemas.String))
	b := schemas.New(field("k", schemas.Float64), field("v", schemas.String))
	j, out := mustBuild(t, "config: {type: inner, equalities: k, fields: {a: {key: k, v: v}}}",
		in{name: "a", schema: a}, in{name: "b", schema: b})
	if got, want := showSchema(out), "key v k v0"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	feed(t, j, 0, "a", rec{1, schemas.Row{int64(2), "two"}}, rec{1, schemas.Row{int64(3), "three"}})
	feed(t, j, 1, "b", rec{1, schemas.Row{2.0, "deux"}}, rec{1, schemas.Row{3.5, "trois et demi"}})
	same(t, "joined", fire(t, j, true), []string{"GlobalWindow: 2 two 2 deux"})
}

// Config problems are reported at their place, all at once, with suggestions.
func TestConfigErrors(t *testing.T) {
	two := []in{{name: "o", schema: orders}, {name: "c", schema: customers}}
	for _, tt := range []struct {
		name, src string
		inputs    []in
		want      []string
	}{
		{"unknown field and input", "config:\n  type: inner\n  equalities: [{o: custmer, c: id}, {o: customer, cc: id}]",
			two, []string{`3:20: unknown field "custmer" of input "o" in equalities (did you mean "customer"?)`,
				`3:51: "cc" in equalities is not an input of Join (its inputs: o, c) (did you mean "c"?)`}},
		{"mismatched types", "config: {type: inner, equalities: [{o: total, c: who}]}",
			two, []string{`1:50: c.who is a string but o.total is a number`}},
		{"shorthand missing in one input", "config: {type: inner, equalities: who}",
			two, []string{`1:35: unknown field "who" of input "o" in equalities`}},
		{"struct key", "config: {type: inner, equalities: [{o: order, s: s}]}",
			[]in{{name: "o", schema: orders}, {name: "s", schema: schemas.New(schemas.Field{Name: "s", Type: schemas.Type{Kind: schemas.Struct}})}},
			[]string{`1:50: s.s is a struct<>: a join matches integers`}},
		{"bad type", "config: {type: cross, equalities: [{o: customer, c: id}]}",
			two, []string{`1:16: join type "cross" is not one of inner, left, right, outer`}},
		{"outer of an unknown input", "config: {type: {outer: [x]}, equalities: [{o: customer, c: id}]}",
			two, []string{`1:25: "x" in type.outer is not an input of Join`}},
		{"unknown fields input and field", "config: {type: inner, equalities: [{o: customer, c: id}], fields: {o: [totl], d: [id]}}",
			two, []string{`1:72: unknown field "totl" of input "o" in fields (did you mean "total"?)`, `1:79: "d" in fields is not an input of Join`}},
		{"a name twice in fields", "config: {type: inner, equalities: [{o: customer, c: id}], fields: {o: {x: order}, c: {x: who}}}",
			two, []string{`1:87: output field "x" is named twice in fields`}},
		{"not connected", "config: {type: inner, equalities: [{a: k, b: k}]}",
			[]in{{name: "a", schema: customers0()}, {name: "b", schema: customers0()}, {name: "c", schema: customers0()}},
			[]string{`1:35: the equalities do not connect every input of Join (a, b, c)`}},
		{"an input not joined to those before it", "config: {type: inner, equalities: [{a: k, c: k}, {c: k, b: k}]}",
			[]in{{name: "a", schema: customers0()}, {name: "b", schema: customers0()}, {name: "c", schema: customers0()}},
			[]string{`1:35: no equality joins input "b" to the inputs before it (a)`}},
		{"one input", "config: {type: inner, equalities: id}",
			[]in{{name: "c", schema: customers}}, []string{`1:1: Join joins two or more inputs given as a mapping of names`}},
		{"a stream in the global window", "config: {type: inner, equalities: [{o: customer, c: id}]}",
			[]in{{name: "o", schema: orders, unbounded: true}, {name: "c", schema: customers}},
			[]string{`1:1: Join reads a stream (input "o") in the global window`, "windowing: {type: fixed, size: 1m}"}},
		{"sessions without a shared key", "windowing: {type: sessions, gap: 1m}\nconfig: {type: inner, equalities: [{a: k, b: k}, {b: v, c: v}]}",
			[]in{{name: "a", schema: kv()}, {name: "b", schema: kv()}, {name: "c", schema: kv()}},
			[]string{"1:1: Join in sessions windows needs a field that is equal across all inputs"}},
		{"sessions with a shared key", "windowing: {type: sessions, gap: 1m}\nconfig: {type: inner, equalities: [{a: k, b: k}, {b: k, c: k}, {a: v, c: v}]}",
			[]in{{name: "a", schema: kv()}, {name: "b", schema: kv()}, {name: "c", schema: kv()}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, _, problems := build(t, tt.src, tt.inputs...)
			if tt.want == nil {
				if j == nil {
					t.Fatalf("refused: %s", problems)
				}
				return
			}
			if j != nil {
				t.Fatal("built, want errors")
			}
			for _, w := range tt.want {
				if !strings.Contains(problems, w) {
					t.Errorf("problems lack %q:\n%s", w, problems)
				}
			}
		})
	}
}

func customers0() *schemas.Schema { return schemas.New(field("k", schemas.Int64)) }

func kv() *schemas.Schema { return schemas.New(field("k", schemas.Int64), field("v", schemas.Int64)) }
