package templates

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// awkward are values YAML would read as something else, or that could break the structure.
var awkward = []string{
	`a\x41b`, `|`, `null`, `~`, `true`, `123`, `"quoted"`, `it's`, `a: b`, `# not a comment`,
	`- x`, "line one\nline two", "", "ünïcødé ✓", "p", `{a: 1}`, `a, b`, ` padded `, `{{ v }}`,
	"x\n  evil: 1",
}

// node returns the node at a dotted path of a rendered document.
func node(t *testing.T, r *Result, path string) *yaml.Node {
	t.Helper()
	n := r.Doc.Content[0]
	for _, k := range strings.Split(path, ".") {
		if n.Kind == yaml.SequenceNode {
			n = n.Content[int(k[0]-'0')]
			continue
		}
		if n = mappingValue(n, k); n == nil {
			t.Fatalf("no %s in the rendered document", path)
		}
	}
	return n
}

// TestValuesArriveAsGiven: a text parameter's value reaches the pipeline as exactly its
// characters, a string, wherever the template puts it.
func TestValuesArriveAsGiven(t *testing.T) {
	path := write(t, "p.yaml", `template:
  parameters:
    - name: v
      type: text
pipeline:
  dq: "{{ v }}"
  sq: '{{ v }}'
  plain: {{ v }}
  block: |-
    {{ v }}
  inner: "pre-{{ v }}-post"
  innerPlain: pre-{{ v }}
  flow: [{{ v }}, {k: {{ v }}}]
  tojson: {{ v | tojson }}
`)
	positions := map[string]string{"dq": "", "sq": "", "plain": "", "block": "", "inner": "pre-%s-post",
		"innerPlain": "pre-%s", "flow.0": "", "flow.1.k": "", "tojson": ""}
	for _, v := range awkward {
		r, err := render(t, path, params("v", v))
		if err != nil {
			t.Errorf("value %q: %v", v, err)
			continue
		}
		for at, form := range positions {
			want := v
			if form != "" {
				want = strings.Replace(form, "%s", v, 1)
			}
			n := node(t, r, "pipeline."+at)
			if n.Kind != yaml.ScalarNode || n.Value != want || n.ShortTag() != "!!str" {
				t.Errorf("value %q at %s arrives as %s %q, want the string %q", v, at, n.ShortTag(), n.Value, want)
			}
		}
	}
}

// TestTypedValuesKeepYAMLTypes: values of typed and undeclared parameters are still typed by
// YAML where they are a whole plain value, and their characters arrive as given.
func TestTypedValuesKeepYAMLTypes(t *testing.T) {
	path := write(t, "p.yaml", header+`pipeline:
  port: {{ port }}
  enabled: {{ enabled }}
  props: {{ props }}
  format: {{ format }}
  quoted: "{{ format }}"
`)
	r, err := render(t, path, params("topic", "t", "port", "8080", "enabled", "true", "props", `{"a": "b"}`, "format", `a\x41b`))
	if err != nil {
		t.Fatal(err)
	}
	for at, want := range map[string]string{"port": "!!int", "enabled": "!!bool", "props": "!!map", "format": "!!str"} {
		if got := node(t, r, "pipeline."+at).ShortTag(); got != want {
			t.Errorf("%s is %s, want %s", at, got, want)
		}
	}
	for _, at := range []string{"format", "quoted"} {
		if got := node(t, r, "pipeline."+at).Value; got != `a\x41b` {
			t.Errorf("%s = %q, want the characters given", at, got)
		}
	}
}

// TestValueUsedInAComputation: a value the template compares or transforms is rendered as it
// is for that use; one printed as it is elsewhere is still placed exactly.
func TestValueUsedInAComputation(t *testing.T) {
	path := write(t, "p.yaml", `template:
  parameters:
    - name: v
pipeline:
{% if not v %}
  empty: yes
{% endif %}
  parts: {{ v.split(";")[0] }}
  whole: "{{ v }}"
`)
	r, err := render(t, path, params("v", `a\tb;c`))
	if err != nil {
		t.Fatal(err)
	}
	if got := node(t, r, "pipeline.whole").Value; got != `a\tb;c` {
		t.Errorf("whole = %q", got)
	}
	if got := node(t, r, "pipeline.parts").Value; got != `a\tb` {
		t.Errorf("parts = %q", got)
	}
	r, err = render(t, path, params("v", ""))
	if err != nil {
		t.Fatal(err)
	}
	if mappingValue(node(t, r, "pipeline"), "empty") == nil {
		t.Errorf("an empty value must be false in {%% if %%}:\n%s", r.Source)
	}
}

// TestRenderShowsPlacedValues: `sluice render` shows the values as the pipeline gets them.
func TestRenderShowsPlacedValues(t *testing.T) {
	path := write(t, "p.yaml", "template:\n  parameters:\n    - name: v\npipeline:\n  dq: \"{{ v }}\"  # a comment\n  n: {{ v }}\n")
	for _, v := range awkward {
		r, err := render(t, path, params("v", v))
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(r.Display()), &doc); err != nil {
			t.Fatalf("%q: render shows invalid YAML: %v\n%s", v, err, r.Display())
		}
		shown := &Result{Doc: &doc}
		for _, at := range []string{"dq", "n"} {
			if got := node(t, shown, "pipeline."+at); got.Value != v || got.ShortTag() != "!!str" {
				t.Errorf("%q: render shows %s %s %q:\n%s", v, at, got.ShortTag(), got.Value, r.Display())
			}
		}
	}
}

// TestValueKeyRepeatsAKey: a value placed as a key must not repeat another key.
func TestValueKeyRepeatsAKey(t *testing.T) {
	path := write(t, "p.yaml", "template:\n  parameters:\n    - name: k\npipeline:\n  {{ k }}: 1\n  \"a#\": 2\n")
	_, err := render(t, path, params("k", "a#"))
	if err == nil || !strings.Contains(err.Error(), `:6:3: the value of parameter "k" would change the pipeline's structure (it repeats key "a#")`) {
		t.Errorf("want the repeated key named: %v", err)
	}
	if _, err := render(t, path, params("k", "b#")); err != nil {
		t.Error(err)
	}
}
