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

// TestIncludeNextToFileFirst: a name that exists both next to the including file and in the
// working directory is the one next to the file.
func TestIncludeNextToFileFirst(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir,
		"pipes/p.yaml", "pipeline:\n  transforms:\n{% include 'part.yaml' %}",
		"pipes/part.yaml", "    - {type: LogForTesting, name: near}\n",
		"part.yaml", "    - {type: LogForTesting, name: cwd}\n")
	t.Chdir(dir)
	src, _ := os.ReadFile("pipes/p.yaml")
	r, err := Render("pipes/p.yaml", src, Input{JinjaVariables: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderedNames(t, r); !slices.Equal(got, []string{"near"}) {
		t.Errorf("got %q, want the file next to the pipeline", got)
	}
}

// TestIncludeMissing: a missing include is an error at the tag, that names the file and where
// it was looked for.
func TestIncludeMissing(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, "p.yaml", "pipeline:\n  transforms:\n    {% include 'nope.yaml' %}\n")
	t.Chdir(dir)
	src, _ := os.ReadFile("p.yaml")
	_, err := Render("p.yaml", src, Input{JinjaVariables: map[string]any{}})
	got := problems(t, "p.yaml", err)
	if len(got) != 1 || !strings.HasPrefix(got[0], "3:16: ") || !strings.Contains(got[0], `"nope.yaml" not found`) ||
		!strings.Contains(got[0], filepath.Join(dir, "nope.yaml")) {
		t.Errorf("got %q, want one error at line 3 naming nope.yaml and where it was looked for", got)
	}
}

// TestIncludeMissingNested: a missing file named by an included file is reported at the
// including tag of the pipeline file, and names the file it was looked for from.
func TestIncludeMissingNested(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir,
		"p.yaml", "pipeline:\n  transforms:\n{% include 'sub/part.yaml' %}\n",
		"sub/part.yaml", "    - {type: LogForTesting}\n{% include 'gone.yaml' %}\n")
	t.Chdir(dir)
	src, _ := os.ReadFile("p.yaml")
	_, err := Render("p.yaml", src, Input{JinjaVariables: map[string]any{}})
	got := problems(t, "p.yaml", err)
	if len(got) != 1 || !strings.HasPrefix(got[0], "3:12: in sub/part.yaml, line 2: ") || !strings.Contains(got[0], `"gone.yaml" not found`) ||
		!strings.Contains(got[0], filepath.Join(dir, "sub", "gone.yaml")) {
		t.Errorf("got %q, want one error at the include tag of sub/part.yaml, naming gone.yaml, its line and where it was looked for", got)
	}
}

// TestExtendsFromWorkingDirectory: a child template given by a relative path extends a base
// found from the working directory. The base's own include is resolved as the child's names
// are (the engine renders the base within the child): here from the working directory.
func TestExtendsFromWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir,
		"pipes/child.yaml", "{% extends 'base/b.yaml' %}{% block t %}    - {type: LogForTesting, name: child}\n{% endblock %}",
		"base/b.yaml", "pipeline:\n  transforms:\n{% block t %}{% endblock %}{% include 'base/tail.yaml' %}",
		"base/tail.yaml", "    - {type: LogForTesting, name: tail}\n")
	t.Chdir(dir)
	src, _ := os.ReadFile("pipes/child.yaml")
	r, err := Render("pipes/child.yaml", src, Input{JinjaVariables: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := renderedNames(t, r); !slices.Equal(got, []string{"child", "tail"}) {
		t.Errorf("got %q\n%s", got, r.Source)
	}
}
