package templates

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dataflowParams are the values the tests give testdata/dataflow's template.
var dataflowParams = params("servers", "localhost:9092", "topic", "events")

func paramNames(h *Header) []string {
	var names []string
	for _, p := range h.Params {
		names = append(names, p.Name)
	}
	return names
}

// checkSourceToLog checks a rendering of testdata/dataflow/yaml/SourceToLog.yaml: option groups
// expanded in order, the undeclared `window` dropped with a warning, unset keys removed.
func checkSourceToLog(t *testing.T, path string, r *Result) {
	t.Helper()
	want := []string{"servers", "topic", "limit", "level", "jobName"}
	if got := paramNames(r.Header); !slices.Equal(got, want) {
		t.Errorf("parameters %q, want %q (the listed groups, expanded in place)", got, want)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].File != path || r.Warnings[0].Line != 38 || r.Warnings[0].Col != 20 ||
		!strings.Contains(r.Warnings[0].Summary, `variable "window" is not declared`) {
		t.Errorf("want one warning naming window at %s:38:20, got %v", path, r.Warnings)
	}
	for p, want := range map[string]string{
		"pipeline.transforms.0.config.topic": "events",
		"pipeline.transforms.1.type":         "LogForTesting",
		"pipeline.transforms.1.config.level": "INFO",
	} {
		if got, _ := value(t, r, p); got != want {
			t.Errorf("%s = %q, want %q\n%s", p, got, want, r.Display())
		}
	}
	for _, p := range []string{"pipeline.transforms.0.config.window", "pipeline.transforms.0.config.max_num_records", "pipeline.transforms.2"} {
		if v, ok := value(t, r, p); ok {
			t.Errorf("%s = %q: an unset or undeclared variable's key must be removed\n%s", p, v, r.Display())
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, filepath.Dir(to), filepath.Base(to), string(b))
}

// TestDataflowLayouts loads one template in each layout Google's tools find options files in.
func TestDataflowLayouts(t *testing.T) {
	testdata, err := filepath.Abs("testdata/dataflow")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(testdata, "yaml", "SourceToLog.yaml")
	opts := func(name string) string { return filepath.Join(testdata, "python", "options", name) }

	t.Run("repository", func(t *testing.T) { // yaml/X.yaml beside python/options/
		t.Chdir(t.TempDir())
		r, err := render(t, tmpl, dataflowParams)
		if err != nil {
			t.Fatal(err)
		}
		checkSourceToLog(t, tmpl, r)
		if got := r.Header.Params[0].Pos.File; got != opts("source_options.yaml") {
			t.Errorf("a grouped parameter's position is in %s, want its options file", got)
		}
	})
	t.Run("staged", func(t *testing.T) { // template.yaml beside options/, as the launcher runs it
		dir := t.TempDir()
		copyFile(t, tmpl, filepath.Join(dir, "template.yaml"))
		copyFile(t, opts("source_options.yaml"), filepath.Join(dir, "options", "source_options.yaml"))
		copyFile(t, opts("sink_options.yaml"), filepath.Join(dir, "options", "sink_options.yaml"))
		t.Chdir(t.TempDir())
		path := filepath.Join(dir, "template.yaml")
		r, err := render(t, path, dataflowParams)
		if err != nil {
			t.Fatal(err)
		}
		checkSourceToLog(t, path, r)
	})
	t.Run("working directory", func(t *testing.T) { // the launcher's own lookup: ./options/
		dir, cwd := t.TempDir(), t.TempDir()
		copyFile(t, tmpl, filepath.Join(dir, "t.yaml"))
		copyFile(t, opts("source_options.yaml"), filepath.Join(cwd, "options", "source_options.yaml"))
		copyFile(t, opts("sink_options.yaml"), filepath.Join(cwd, "options", "sink_options.yaml"))
		t.Chdir(cwd)
		path := filepath.Join(dir, "t.yaml")
		r, err := render(t, path, dataflowParams)
		if err != nil {
			t.Fatal(err)
		}
		checkSourceToLog(t, path, r)
	})
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "t.yaml")
		copyFile(t, tmpl, path)
		t.Chdir(t.TempDir())
		_, err := render(t, path, dataflowParams)
		// Only the files: not their groups, nor the parameters they would have declared.
		want := []string{`18:7: options file "source_options" not found`, `19:7: options file "sink_options" not found`}
		if got := problems(t, path, err); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

// TestUndeclaredVariableGiven: an undeclared variable given with --jinja_variables is used,
// without a warning; a plain Jinja file (no header) keeps Beam's rule, tested in TestUndefinedVariable.
func TestUndeclaredVariableGiven(t *testing.T) {
	tmpl, _ := filepath.Abs("testdata/dataflow/yaml/SourceToLog.yaml")
	in := dataflowParams
	in.JinjaVariables = map[string]any{"window": int64(10)}
	r, err := render(t, tmpl, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("a given variable must not be warned about: %v", r.Warnings)
	}
	if got, _ := value(t, r, "pipeline.transforms.1.type"); got != "WindowInto" {
		t.Errorf("the given window must make the WindowInto:\n%s", r.Display())
	}
}

// TestUndeclaredVariableAsParameter: a parameter that the template does not declare but its
// pipeline uses as a variable is passed to Jinja, as Google's launcher does (its integration
// tests give Kafka_To_Iceberg's bootstrap_servers so); a name the pipeline does not use is
// still an unknown parameter.
func TestUndeclaredVariableAsParameter(t *testing.T) {
	tmpl, _ := filepath.Abs("testdata/dataflow/yaml/SourceToLog.yaml")
	r, err := render(t, tmpl, params("servers", "localhost:9092", "topic", "events", "window", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("a given variable must not be warned about: %v", r.Warnings)
	}
	if got, _ := value(t, r, "pipeline.transforms.1.type"); got != "WindowInto" {
		t.Errorf("the given window must make the WindowInto:\n%s", r.Display())
	}
	_, err = render(t, tmpl, params("servers", "localhost:9092", "topic", "events", "windw", "10"))
	if err == nil || !strings.Contains(err.Error(), `unknown parameter "windw"`) {
		t.Errorf("a name the pipeline does not use must be an unknown parameter, got %v", err)
	}
}

// TestBuiltinsUseOptionGroups: the built-in templates that share parameters declare them in
// option groups of builtin/options/, as Google's do, and those expand.
func TestBuiltinsUseOptionGroups(t *testing.T) {
	for name, want := range map[string][]string{
		"Kafka_To_Iceberg":  {"table", "catalogProperties"},
		"Iceberg_To_Kafka":  {"table", "catalogName"},
		"Kafka_To_Kafka":    {"kafkaReadOffset", "kafkaReadPasswordSecretId"},
		"Kafka_To_BigQuery": {"consumerGroupId", "kafkaReadKeyPasswordSecretId"},
	} {
		b, err := LookupBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b.Source), "options_file:") {
			t.Errorf("%s: no options_file", name)
		}
		for _, p := range b.Header.Params {
			if slices.Contains(want, p.Name) && !strings.HasPrefix(p.Pos.File, BuiltinPrefix+"options/") {
				t.Errorf("%s: parameter %s declared at %s, want in an options file", name, p.Name, p.Pos.File)
			}
			want = slices.DeleteFunc(want, func(s string) bool { return s == p.Name })
		}
		if len(want) > 0 {
			t.Errorf("%s: parameters %q missing", name, want)
		}
	}
}
