package templates

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeTree writes files (path, content pairs, paths relative to dir, directories made).
func writeTree(t *testing.T, dir string, files ...string) {
	t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// includeTree is a pipeline in pipes/ that includes a file next to it, which includes one
// found only from the working directory, and imports a macro file next to the pipeline.
var includeTree = []string{
	"pipes/p.yaml", `{% import 'lib/m.yaml' as m %}pipeline:
  type: chain
  transforms:
{% include 'sub/part.yaml' %}
    - {{ m.log('end') }}
`,
	"pipes/sub/part.yaml", "    - type: Create\n      name: {{ first }}\n      config: {elements: [{a: 1}]}\n{% include 'shared/log.yaml' %}",
	"pipes/lib/m.yaml", "{% macro log(n) %}{type: LogForTesting, name: {{ n }}}{% endmacro %}",
	"shared/log.yaml", "    - type: LogForTesting\n      name: shared\n",
}

func renderedNames(t *testing.T, r *Result) []string {
	t.Helper()
	var names []string
	for i := 0; ; i++ {
		v, ok := value(t, r, "pipeline.transforms."+strconv.Itoa(i)+".name")
		if !ok {
			return names
		}
		names = append(names, v)
	}
}

// TestIncludeResolution: names resolve next to the including file, then from the working
// directory, for a pipeline given by a relative or an absolute path, through nested includes.
func TestIncludeResolution(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, includeTree...)
	t.Chdir(dir)
	in := Input{JinjaVariables: map[string]any{"first": "make"}}
	want := []string{"make", "shared", "end"}
	for _, path := range []string{"pipes/p.yaml", filepath.Join(dir, "pipes/p.yaml"), "./pipes/../pipes/p.yaml"} {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(path, src, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderedNames(t, r); !slices.Equal(got, want) {
				t.Errorf("transforms %q, want %q\n%s", got, want, r.Source)
			}
		})
	}
}

// renderTree writes files into a new working directory and renders the first, given by its
// relative path; it returns the directory too.
func renderTree(t *testing.T, files ...string) (*Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files...)
	t.Chdir(dir)
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(files[0], src, Input{JinjaVariables: map[string]any{}})
	return r, dir, err
}

// TestIncludeOrder: a name found both next to the including file and in the working
// directory is the one next to the file; a child given by a relative path extends a base
// found from the working directory, and the base's own include resolves as the child's names
// do (the engine renders the base within the child).
func TestIncludeOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"next to the file first", []string{
			"pipes/p.yaml", "pipeline:\n  transforms:\n{% include 'part.yaml' %}",
			"pipes/part.yaml", "    - {type: LogForTesting, name: near}\n",
			"part.yaml", "    - {type: LogForTesting, name: cwd}\n"}, []string{"near"}},
		{"extends from the working directory", []string{
			"pipes/child.yaml", "{% extends 'base/b.yaml' %}{% block t %}    - {type: LogForTesting, name: child}\n{% endblock %}",
			"base/b.yaml", "pipeline:\n  transforms:\n{% block t %}{% endblock %}{% include 'base/tail.yaml' %}",
			"base/tail.yaml", "    - {type: LogForTesting, name: tail}\n"}, []string{"child", "tail"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := renderTree(t, c.files...)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderedNames(t, r); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q\n%s", got, c.want, r.Source)
			}
		})
	}
}

// TestIncludeMissing: a missing include is an error at the tag's file name, that names the
// file and where it was looked for; one named by an included file is reported at the
// pipeline's include tag, naming the included file and its line.
func TestIncludeMissing(t *testing.T) {
	for _, c := range []struct {
		name   string
		files  []string
		prefix string
		looked []string
	}{
		{"in the pipeline", []string{"p.yaml", "pipeline:\n  transforms:\n    {% include 'nope.yaml' %}\n"},
			`3:16: file "nope.yaml" not found: looked for `, []string{"nope.yaml"}},
		{"in an included file", []string{
			"p.yaml", "pipeline:\n  transforms:\n{% include 'sub/part.yaml' %}\n",
			"sub/part.yaml", "    - {type: LogForTesting}\n{% include 'gone.yaml' %}\n"},
			`3:12: in sub/part.yaml, line 2: file "gone.yaml" not found: looked for `, []string{"sub/gone.yaml", "gone.yaml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, dir, err := renderTree(t, c.files...)
			got := problems(t, "p.yaml", err)
			ok := len(got) == 1 && strings.HasPrefix(got[0], c.prefix)
			for _, l := range c.looked {
				ok = ok && strings.Contains(got[0], filepath.Join(dir, l))
			}
			if !ok {
				t.Errorf("got %q, want one problem %q... naming %q", got, c.prefix, c.looked)
			}
		})
	}
}
