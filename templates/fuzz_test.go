package templates

import "testing"

// FuzzRender: rendering any file with any parameter value must not panic, and a value that
// renders must not have changed the structure (Render checks that itself; here it must not crash).
func FuzzRender(f *testing.F) {
	f.Add("template:\n  parameters:\n    - name: v\npipeline:\n  a: {{ v }}\n  b: \"{{ v }}\"\n", "x: y\n- z")
	f.Add("pipeline: [{{ v | default('a') }}]\n{% if v %}\nx: {{ v | tojson }}\n{% endif %}\n", "{{ v }}")
	f.Add("pipeline:\n  {{ v }}: 1\n", "#")
	f.Fuzz(func(t *testing.T, src, v string) {
		_, _ = Render("f.yaml", []byte(src), Input{Params: []Param{{Name: "v", Value: v}}})
	})
}
