package schemas

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestInfer(t *testing.T) {
	tests := []struct {
		name    string
		samples []map[string]any
		want    string
	}{
		{
			"kinds",
			[]map[string]any{{"a": 1, "b": 1.5, "c": "x", "d": true, "e": time.Now(), "f": []byte{1}}},
			"{a integer, b number, c string, d boolean, e timestamp, f bytes}",
		},
		{
			"first appearance order; keys a sample adds are sorted",
			[]map[string]any{{"z": 1}, {"z": 2, "b": 1, "a": 1}},
			"{z integer, a integer?, b integer?}",
		},
		{
			"missing or null means nullable",
			[]map[string]any{{"a": 1, "b": nil}, {"b": 2}},
			"{a integer?, b integer?}",
		},
		{"always null is a nullable any", []map[string]any{{"a": nil}, {"a": nil}}, "{a any?}"},
		{"integers and floats make numbers", []map[string]any{{"a": 1}, {"a": 2.5}}, "{a number}"},
		{"incompatible kinds make any", []map[string]any{{"a": 1}, {"a": "x"}}, "{a any}"},
		{
			"nested maps are structs, unified",
			[]map[string]any{{"u": map[string]any{"name": "a", "age": 1}}, {"u": map[string]any{"name": "b", "tag": "t"}}},
			"{u struct<age integer, name string, tag string>}",
		},
		{
			"lists unify their elements",
			[]map[string]any{{"l": []any{1, nil, 2.5}, "e": []any{}, "m": []any{map[string]any{"a": 1}, map[string]any{"b": "x"}}}},
			"{e array<any>, l array<number>, m array<struct<a integer, b string>>}",
		},
		{"empty list unified with a full one", []map[string]any{{"l": []any{}}, {"l": []any{"x"}}}, "{l array<string>}"},
		{"struct and scalar make any", []map[string]any{{"a": map[string]any{}}, {"a": 1}}, "{a any}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Infer(tt.samples)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestInferNestedNullability(t *testing.T) {
	s, err := Infer([]map[string]any{
		{"u": map[string]any{"a": 1, "b": 2}},
		{"u": map[string]any{"a": 3, "b": nil}},
		{"u": map[string]any{"a": 4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := s.Field("u")
	if u.Nullable || u.Type.Fields[0].Nullable || !u.Type.Fields[1].Nullable {
		t.Errorf("got %+v, want u and u.a required, u.b nullable", u)
	}
}

func TestInferErrors(t *testing.T) {
	if _, err := Infer(nil); err == nil || err.Error() != "no samples to infer a schema from" {
		t.Errorf("no samples: %v", err)
	}
	_, err := Infer([]map[string]any{{"a": 1}, {"a": map[string]any{"b": struct{}{}}}})
	if want := `sample 2: field "a.b": cannot infer a type from an unsupported value`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestInferJSONLines(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"zeta": 1, "alpha": "x", "n": 1.0, "user": {"z": 1, "a": true}}`),
		[]byte("  "),
		[]byte(`{"zeta": 2, "alpha": null, "extra": [1, 2], "big": 12345678901234567890}`),
	}
	s, err := InferJSONLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := "{zeta integer, alpha string?, n number?, user struct<z integer, a boolean>?, extra array<integer>?, big number?}"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	for _, tt := range []struct{ lines, want string }{
		{"{\"a\": 1}\n[1]", "line 2: want an object, got array"},
		{"{\"a\": 1}\n\n{\"a\": ", "line 3: invalid JSON: unexpected EOF"},
		{"{\"a\": 1} 2", "line 1: invalid JSON: more data after the value"},
		{"{\"a\": tru}", "line 1: invalid JSON: invalid character '}' in literal true (expecting 'e')"},
		{"\n\n", "no samples to infer a schema from"},
		{strings.Repeat("[", 2000), "line 1: JSON nested deeper than 1000 levels"},
	} {
		var ls [][]byte
		for _, l := range strings.Split(tt.lines, "\n") {
			ls = append(ls, []byte(l))
		}
		if _, err := InferJSONLines(ls); err == nil || err.Error() != tt.want {
			t.Errorf("%q: got %v, want %s", tt.lines, err, tt.want)
		}
	}
}

func TestInferYAML(t *testing.T) {
	var doc yaml.Node
	text := `
- {zeta: 1, alpha: x, when: 2024-01-01T00:00:00Z, day: 2024-01-31, quoted: "2024-01-31", tags: [a, b], nested: {y: 1, x: 2}}
- {zeta: 2.5, beta: true}
`
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := InferYAML(doc.Content[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	want := "{zeta number, alpha string?, when timestamp?, day date?, quoted string?, tags array<string>?, nested struct<y integer, x integer>?, beta boolean?}"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := InferYAML([]*yaml.Node{doc.Content[0]}); err == nil || err.Error() != "element 1: want an object, got array" {
		t.Errorf("list element: %v", err)
	}
}
