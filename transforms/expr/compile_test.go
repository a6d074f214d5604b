package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// Compile errors carry the file position of the offending part of the expression, whatever
// the YAML style of the scalar.
func TestCompileErrorPositions(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"plain", "keep: amout > 1",
			`p.yaml:1:7: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"plain after text", "keep: amount > 1 and nane == 'x'",
			`p.yaml:1:22: unknown field "nane" in the expression (did you mean "name"?)`},
		{"double quoted", `keep: "name == 'x' && amout > 1"`,
			`p.yaml:1:23: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"double quoted with escapes", `keep: "name == \"x\" && amout > 1"`,
			`p.yaml:1:25: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"single quoted with escapes", `keep: 'name == ''x'' && amout > 1'`,
			`p.yaml:1:25: unknown field "amout" in the expression (did you mean "amount"?)`},
		{"literal block", "keep: |\n  amount > 1 and\n    nane == 'x'",
			`p.yaml:3:5: unknown field "nane" in the expression (did you mean "name"?)`},
		{"folded block", "keep: >\n  amount > 1 and\n  nane == 'x'",
			`p.yaml:3:3: unknown field "nane" in the expression (did you mean "name"?)`},
		{"plain multi-line", "keep: amount > 1 and\n  nane == 'x'",
			`p.yaml:2:3: unknown field "nane" in the expression (did you mean "name"?)`},
		{"double quoted multi-line", "keep: \"amount > 1 and\n    nane == 'x'\"",
			`p.yaml:2:5: unknown field "nane" in the expression (did you mean "name"?)`},
		{"nested mapping form", "keep:\n  expression: name +\n    1",
			`p.yaml:2:20: invalid operation: + (mismatched types string and integer)`},
		{"flow mapping form", "keep: {expression: 'ratio > \"x\"'}",
			`p.yaml:1:27: invalid operation: > (mismatched types number and string)`},
		{"syntax error", "keep: amount > ",
			`p.yaml:1:14: unexpected end of the expression`},
		{"unterminated string", "keep: name == 'x",
			`p.yaml:1:17: string literal not terminated`},
		{"unknown function", "keep: uper(name) == 'X'",
			`p.yaml:1:7: unknown function "uper" in the expression (did you mean "upper"?)`},
		{"unknown struct member", "keep: user.adress.zip == ''",
			`p.yaml:1:12: unknown field "adress" in "user" (did you mean "address"?)`},
		{"literal zero divisor", "keep: amount / 0 > 1",
			`p.yaml:1:14: division by zero`},
		{"bad argument", "keep: len(amount) > 1",
			`p.yaml:1:7: invalid argument for len (type integer)`},
		{"empty", "keep: ' '", `p.yaml:1:8: the expression is empty`},
		{"not an expression", "keep: [a]", `p.yaml:1:7: must be an expression, not a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileYAML(t, tt.src, "keep", "")
			if err == nil {
				t.Fatal("compiled without error")
			}
			got, _, _ := strings.Cut(err.Error(), "\n")
			if got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestCompileErrorIsDiagnostic(t *testing.T) {
	_, err := compileYAML(t, "keep: amout > 1", "keep", "")
	var d diag.Diagnostic
	if !errors.As(err, &d) {
		t.Fatalf("error %T is not a diag.Diagnostic", err)
	}
	if d.Detail == "" || !strings.Contains(d.Detail, "amount") {
		t.Errorf("hint %q does not list the fields", d.Detail)
	}
	if strings.Contains(err.Error(), "interface {}") || strings.Contains(err.Error(), " | ") {
		t.Errorf("error shows Go types or a source snippet: %v", err)
	}
}

func TestResultTypes(t *testing.T) {
	str := schemas.Type{Kind: schemas.String}
	tests := []struct {
		text     string
		want     string
		nullable bool
	}{
		{"amount", "integer", false},
		{"count", "integer", true},
		{"price", "decimal(10, 2)", false},
		{"payload", "bytes", false},
		{"user-id", "string", false},
		{"amount * 2", "integer", false},
		{"amount / 2", "number", false},
		{"ratio + amount", "number", false},
		{"upper(name)", "string", false},
		{"amount > 3", "boolean", false},
		{"count ?? 0", "integer", false},
		{"count + 1", "integer", false},
		{"ok ? name : nil", "string", true},
		{"ok ? 1 : 'x'", "any", true},
		{"user.id", "integer", false},
		{"user.address", "struct<zip string>", false},
		{"tags", "array<string>", false},
		{"tags[0]", "string", true},
		{"attrs.k", "string", true},
		{"split(name, ',')", "array<" + str.String() + ">", true},
		{"ts", "timestamp", false},
		{"date('2024-01-01')", "timestamp", false},
		{"now() - ts", "integer", false},
		{"price * 2", "number", false},
		{"extra", "any", true},
		{"{'a': 1}", "map<string, any>", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			p, err := Compile(component.Expr{Text: tt.text}, testSchema, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Type().String() != tt.want || p.Nullable() != tt.nullable {
				t.Errorf("type %s nullable %v, want %s nullable %v", p.Type(), p.Nullable(), tt.want, tt.nullable)
			}
		})
	}
}

func TestPlainFieldNameReadsTheField(t *testing.T) {
	p, err := Compile(component.Expr{Text: "user-id"}, testSchema, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := p.Field(); !ok || testSchema.Fields[i].Name != "user-id" {
		t.Errorf("Field() = %d, %v", i, ok)
	}
}

func TestLanguages(t *testing.T) {
	for _, lang := range []string{"", "generic", "expr", "Python"} {
		if _, err := Compile(component.Expr{Text: "amount > 1"}, testSchema, Options{Language: lang}); err != nil {
			t.Errorf("%s: %v", lang, err)
		}
	}
	for _, lang := range []string{"javascript", "sql", "java"} {
		_, err := Compile(component.Expr{Text: "amount > 1"}, testSchema, Options{Language: lang})
		if err == nil || !strings.Contains(err.Error(), `language "`+lang+`" is not supported`) ||
			!strings.Contains(err.Error(), "generic") {
			t.Errorf("%s: error %v", lang, err)
		}
	}
}

func TestPython(t *testing.T) {
	ok := []struct {
		text string
		want any
	}{
		{"amount > 1 and name == 'widget'", true},
		{"not ok or amount < 0", false},
		{"True", true},
		{"count is None", true},
		{"count is not None", false},
		{"None", nil},
		{"-7 % 3", int64(2)},
		{"7 % -3", int64(-2)},
		{"7.5 % 2", 1.5},
		{"amount / 2", 3.5},
		{"'#' + name", "#widget"},
		{"'a' in tags", true},
		{"name[1:3]", "id"},
		{"len(tags) == 2", true},
	}
	for _, tt := range ok {
		t.Run(tt.text, func(t *testing.T) {
			v, _, err := eval(t, tt.text, "python", testRow())
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
		})
	}
	bad := []struct{ text, want string }{
		{"amount if ok else 0", `p.yaml:1:14: conditional expressions (x if c else y) are not supported in expressions`},
		{"name.upper()", `p.yaml:1:12: method calls such as .upper() are not supported in expressions`},
		{"amount // 2", `p.yaml:1:14: floor division (//) is not supported in expressions`},
		{"lambda x: x", `p.yaml:1:7: lambda is not supported in expressions`},
		{"[x for x in tags]", `p.yaml:1:10: comprehensions are not supported in expressions`},
		{"amount ?? 1", `p.yaml:1:14: the ?? operator is not Python; use language: generic for expr syntax`},
		{"ok && ok", `p.yaml:1:10: && (Python writes and) is not Python; use language: generic for expr syntax`},
		{"amount ^ 2", `p.yaml:1:14: ^ (bitwise xor in Python, power in expr) is not Python; use language: generic for expr syntax`},
		{"name # note", `p.yaml:1:12: comments (#) are not supported in expressions`},
		{"str(amount)", `p.yaml:1:7: unknown function "str" in the expression`},
		{"amount % 0", `p.yaml:1:14: modulo by zero`},
	}
	for _, tt := range bad {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := eval(t, tt.text, "python", testRow())
			if err == nil {
				t.Fatal("no error")
			}
			if got, _, _ := strings.Cut(err.Error(), "\n"); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
	_, _, err := eval(t, "name.upper()", "python", testRow())
	if !strings.Contains(err.Error(), "hint: write upper(s)") {
		t.Errorf("no hint in %v", err)
	}
}
