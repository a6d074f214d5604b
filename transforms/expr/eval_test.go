package expr

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func TestEval(t *testing.T) {
	tests := []struct {
		text string
		want any
	}{
		{"amount * 2", int64(14)},
		{"amount / 2", 3.5},
		{"amount % 4", int64(3)},
		{"ratio * 4", 2.0},
		{"count ?? 5", int64(5)},
		{"upper(payload)", "RAW"},
		{"payload", []byte("raw")},
		{"price * 2", 39.98},
		{"user.address.zip", "10115"},
		{"user-id", "u-1"},
		{"ts.Year()", int64(2024)},
		{"{'a': 1, 'b': [1, 2.5]}", map[string]any{"a": int64(1), "b": []any{int64(1), 2.5}}},
		{"split(name, 'd')", []any{"wi", "get"}},
		{"duration('1500ms')", int64(1500)},
		{"tags", []any{"a", "b"}},
		// A null field equals nil and differs from any value, as None in Python.
		{"count == 5", false},
		{"count != 5", true},
		{"5 == count", false},
		{"count == nil", true},
		{"amount == 7 && count == nil", true},
		{"nick == 'x'", false},
		{"nick != 'x'", true},
		{"'x' == nick", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, _, err := eval(t, tt.text, "", testRow())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// Division by zero is an error for the row, as in Beam, not +Inf; so is arithmetic on null.
func TestEvalErrors(t *testing.T) {
	zero := testRow()
	zero[0] = int64(0)
	tests := []struct {
		text  string
		row   schemas.Row
		want  string
		cause error
	}{
		{"10 / amount", zero, "p.yaml:1:10: division by zero", ErrDivisionByZero},
		{"ratio / (amount * 1.0)", zero, "p.yaml:1:13: division by zero", ErrDivisionByZero},
		{"10 % amount", zero, "p.yaml:1:10: modulo by zero", ErrModuloByZero},
		{"count + 1", testRow(), "p.yaml:1:13: invalid operation: null + integer", nil},
		{"amount / count", testRow(), "p.yaml:1:14: invalid operation: integer / null", nil},
		{"extra.x", testRow(), "p.yaml:1:13: cannot fetch x from null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := eval(t, tt.text, "", tt.row)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("error %v is not %v", err, tt.cause)
			}
		})
	}
}

func TestOutputType(t *testing.T) {
	tests := []struct {
		src  string
		want any
		typ  string
	}{
		{"f: {expression: amount / 2, output_type: integer}", nil, "integer"},
		{"f: {expression: amount * 2, output_type: number}", 14.0, "number"},
		{"f: {expression: 'amount', output_type: string}", nil, "string"},
		{"f: {expression: tags, output_type: {type: array, items: {type: string}}}", []any{"a", "b"}, "array<string>"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := compileYAML(t, tt.src, "f", "")
			if err != nil {
				t.Fatal(err)
			}
			if p.Type().String() != tt.typ {
				t.Errorf("type %s, want %s", p.Type(), tt.typ)
			}
			s := NewEvaluator(testSchema, p).Scope()
			defer s.Release()
			s.Bind(testRow())
			got, err := s.Eval(0)
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), "cannot convert the result to "+tt.typ) {
					t.Errorf("got %#v, %v; want a conversion error", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
	_, err := compileYAML(t, "f: {expression: amount, output_type: integr}", "f", "")
	if err == nil || !strings.HasPrefix(err.Error(), `p.yaml:1:38: output_type: unknown type "integr" (did you mean "integer"?)`) {
		t.Errorf("bad output_type: %v", err)
	}
}

// An Evaluator is shared by concurrent lanes; each takes its own Scope.
func TestEvaluatorConcurrent(t *testing.T) {
	a, _ := Compile(component.Expr{Text: "amount * 2"}, testSchema, Options{})
	b, _ := Compile(component.Expr{Text: "name + '!'"}, testSchema, Options{})
	ev := NewEvaluator(testSchema, a, b)
	var wg sync.WaitGroup
	for lane := range 8 {
		wg.Go(func() {
			s := ev.Scope()
			defer s.Release()
			for i := range 1000 {
				row := testRow()
				row[0] = int64(lane*1000 + i)
				s.Bind(row)
				v, err := s.Eval(0)
				if err != nil || v != int64(2*(lane*1000+i)) {
					t.Errorf("lane %d row %d: %v %v", lane, i, v, err)
					return
				}
				if v, _ := s.Eval(1); v != "widget!" {
					t.Errorf("got %v", v)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestEvalAllocations(t *testing.T) {
	p, _ := Compile(component.Expr{Text: "amount > 3 && name != 'x'"}, testSchema, Options{})
	ev := NewEvaluator(testSchema, p)
	row := testRow()
	s := ev.Scope()
	defer s.Release()
	allocs := testing.AllocsPerRun(100, func() {
		s.Bind(row)
		if _, err := s.Eval(0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations per row for a filter expression", allocs)
	}
}
