package yamlfmt

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCases(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"comment before the next key after a compact sequence", "key:\n- a\n# about other\nother: 1\n", "key:\n  - a\n# about other\nother: 1\n"},
		{"trailing spaces and CRLF", "a: 1   \r\nb:\r\n  - x  \r\n", "a: 1\nb:\n  - x\n"},
		{"no final newline", "a: 1", "a: 1\n"},
		{"byte order mark", "\ufeffa: 1\n", "a: 1\n"},
		{"comments only", "  # one\n\n\n# two   \n", "# one\n\n# two\n"},
		{"empty file", "", ""},
		{"block scalar at the end without newline", "a: |\n  text", "a: |-\n  text\n"},
		{"trailing spaces inside a block scalar are text", "a: |\n  x  \n", "a: |\n  x  \n"},
		{"two line comments on one output line", "a: # on the key\n  b # on the value\n", "a: # on the key\n  b # on the value\n"},
		{"comment between key and value", "a:\n  # about b\n  b\n", "a:\n  # about b\n  b\n"},
		{"blank line kept once before a comment", "a: 1\n\n\n# c\nb: 2\n", "a: 1\n\n# c\nb: 2\n"},
		{"blank line after a key that opens a block goes", "a:\n\n  b: 1\n", "a:\n  b: 1\n"},
		{"folded scalar with more-indented lines", "a: >\n  x\n    more\n  y\n", "a: >\n  x\n    more\n  y\n"},
		{"document markers", "a: 1\n---\nb: 2\n...\n", "a: 1\n---\nb: 2\n"},
		{"empty document", "---\n", "---\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Format("f.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("Format(%q) =\n%s\nwant:\n%s", tc.in, out, tc.want)
			}
		})
	}
}

func TestJinja(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		jinja    bool
	}{
		{"statement", "pipeline:\n{% if x %}\n  type: chain\n{% endif %}\n", true},
		{"comment tag", "{# a note #}\npipeline: {}\n", true},
		{"expression as a value", "pipeline:\n  transforms:\n    - type: ReadFromKafka\n      config:\n        topic: {{ topic }}\n", true},
		{"expression in a quoted value", "a: \"{{ x }}\"\n", true},
		{"not YAML before rendering", "a: {{ x }\n", true},
		{"template header and an expression in a block scalar", "template:\n  name: T\npipeline:\n  x: |\n    {{ y }}\n", true},
		{"faker syntax in a block scalar of a plain file", "pipeline:\n  x: |\n    {{username()}}\n", false},
		{"plain template header without Jinja", "template:\n    name: T\npipeline:\n    type: chain\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Format("f.yaml", []byte(tc.in))
			if got := errors.Is(err, ErrJinja); got != tc.jinja {
				t.Errorf("Jinja template: %v (%v), want %v", got, err, tc.jinja)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"tab in the indentation", "a:\n\tb: 1\n", "f.yaml:2:1: tab character in the indentation"},
		{"tab after spaces in a valid file", "a:\n  b:\n  \t- 1\n", "f.yaml:3:3: tab character in the indentation"},
		{"syntax", "a:\n  b: 1\n c: 2\n", "f.yaml:2:3: invalid YAML: did not find expected key"},
		{"duplicate key", "a: 1\na: 2\n", "f.yaml:2:1: invalid YAML: mapping key \"a\" already defined at line 1"},
		{"complex key", "? [a, b]\n: 1\n", "f.yaml:1:3: cannot format a complex mapping key"},
		{"Unicode line separator", "a: x\u2028y\n", "f.yaml:1:5: Unicode line break character U+2028"},
		{"not UTF-8", "a: \xff\n", "f.yaml:1:1: not UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Format("f.yaml", []byte(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A tab inside a block scalar is text.
	if _, err := Format("f.yaml", []byte("a: |\n  x\n  \ty\n")); err != nil {
		t.Errorf("a tab in a block scalar: %v", err)
	}
}

// TestGuard checks that Format refuses an output that would mean something else or lose a
// comment. The first case is real: yaml.v3's encoder refolds a folded scalar with a
// more-indented line into a different string, which is why fmt copies block scalars from the
// source instead.
func TestGuard(t *testing.T) {
	src := []byte("a: > # keep me\n  x\n    more\n  y\n")
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	encoded := []byte(b.String())
	want := map[string]int{"# keep me": 1}
	err := check("f.yaml", src, want, encoded)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "would mean something else at a") {
		t.Errorf("the encoder's output %q: %v, want a refusal", encoded, err)
	}
	err = check("f.yaml", src, want, []byte("a: >\n  x\n    more\n  y\n"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `lose the comment "# keep me"`) {
		t.Errorf("an output without the comment: %v, want a refusal", err)
	}
	if out, err := Format("f.yaml", src); err != nil || string(out) != string(src) {
		t.Errorf("Format = %q, %v; want the input unchanged", out, err)
	}
}

func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve"
	want := "--- a\n+++ b\n" +
		"@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n" +
		"@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n\\ No newline at end of file\n"
	if got := Diff("a", "b", []byte(a), []byte(b)); got != want {
		t.Errorf("Diff:\n%s\nwant:\n%s", got, want)
	}
	if got := Diff("a", "b", []byte(a), []byte(a)); got != "" {
		t.Errorf("Diff of equal texts: %q", got)
	}
	if got := Diff("a", "b", nil, []byte("x\n")); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("Diff from empty: %q", got)
	}
}
