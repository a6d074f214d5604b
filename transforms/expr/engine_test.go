package expr

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// fakeEngine compiles everything to a program returning its text, and counts its calls.
type fakeEngine struct{ calls *int }

func (e fakeEngine) Compile(src Source, _ *schemas.Schema, _ Options) (Dynamic, error) {
	*e.calls++
	return fakeDynamic(src.Expr.Text), nil
}

type fakeDynamic string

func (d fakeDynamic) Type() schemas.Type { return schemas.Type{Kind: schemas.String} }
func (d fakeDynamic) Nullable() bool     { return false }
func (d fakeDynamic) NewRunner() Runner  { return d }
func (d fakeDynamic) Run(schemas.Row) (any, error) {
	return string(d), nil
}

// With an engine registered for python, expr-lang keeps what it runs with Python's meaning
// and hands the rest over; its own errors stay where Python would fail too.
func TestEngineFallback(t *testing.T) {
	calls := 0
	RegisterEngine("python", fakeEngine{&calls})
	defer RegisterEngine("python", nil)
	for _, tt := range []struct {
		text   string
		engine bool
		err    string
	}{
		{text: "amount + 1"},
		{text: "nick is None"},
		{text: "'pos' if amount > 0 else 'neg'", engine: true},
		{text: "name.upper()", engine: true},
		{text: "str(amount)", engine: true},
		{text: "round(ratio)", engine: true},
		{text: "amount // 2", engine: true},
		{text: "nick or name", engine: true},
		{text: "ts - ts", engine: true},
		{text: "ts - ts > 12", engine: true},
		{text: "amout + 1", err: `unknown field "amout"`},
		{text: "name * 2", engine: true}, // repetition, in Python
		{text: "name - 1", err: "invalid operation"},
		{text: "amount && ok", err: "&& (Python writes and)"},
	} {
		t.Run(tt.text, func(t *testing.T) {
			before := calls
			p, err := Compile(component.Expr{Text: tt.text, Pos: diag.Pos{File: "p.yaml", Line: 1, Col: 1}}, testSchema, Options{Language: "python"})
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case (p.dyn != nil) != tt.engine || (calls > before) != tt.engine:
				t.Errorf("engine used: %v, want %v", p.dyn != nil, tt.engine)
			}
		})
	}
	p, err := Spec{Expr: component.Expr{Text: "lambda row: 1"}, Kind: KindCallable}.Compile(testSchema, Options{Language: "generic"})
	if err == nil || !strings.Contains(err.Error(), "callable needs language: python") {
		t.Errorf("callable with language generic: %v, %v", p, err)
	}
}

// A language registered by an engine alone (javascript) is accepted and runs every
// expression on its engine, except a plain field name (a rename) outside Filter's keep.
func TestEngineOnlyLanguage(t *testing.T) {
	calls := 0
	if err := CheckLanguage("fakescript"); err == nil {
		t.Fatal("an unregistered language accepted")
	}
	RegisterEngine("fakescript", fakeEngine{&calls})
	defer RegisterEngine("fakescript", nil)
	if err := CheckLanguage("FakeScript"); err != nil {
		t.Fatal(err)
	}
	at := diag.Pos{File: "p.yaml", Line: 1, Col: 1}
	for _, tt := range []struct {
		text   string
		truth  bool
		engine bool
	}{{"amount + 1", false, true}, {"name", false, false}, {"ok", true, true}} {
		before := calls
		p, err := Compile(component.Expr{Text: tt.text, Pos: at}, testSchema, Options{Language: "fakescript", Truth: tt.truth})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.dyn != nil && calls > before; got != tt.engine {
			t.Errorf("%s (truth %v): engine used %v, want %v", tt.text, tt.truth, got, tt.engine)
		}
	}
	if _, err := (Spec{Expr: component.Expr{Text: "row => 1", Pos: at}, Kind: KindCallable}).Compile(testSchema, Options{Language: "fakescript"}); err != nil {
		t.Errorf("callable in an engine-only language: %v", err)
	}
	if !Truthy("javascript") || !Truthy("python") || Truthy("generic") {
		t.Error("Truthy: python and javascript keep by truthiness, generic does not")
	}
}
