package templates

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
)

// BuiltinPrefix marks a built-in template where a pipeline file is expected:
// `sluice run template:Kafka_To_Iceberg`.
const BuiltinPrefix = "template:"

//go:embed builtin/*.yaml builtin/options/*.yaml
var builtinFS embed.FS

// Builtin is a template embedded in the binary.
type Builtin struct {
	// Name is the template's name, as Google names its counterpart (Kafka_To_Iceberg).
	Name string
	// Path is what messages call it: template:NAME.
	Path string
	// Source is the template file.
	Source []byte
	// Header is its template header.
	Header *Header
}

// Builtins returns the built-in templates, sorted by name. It panics when one of them has an
// invalid header: that is a bug of the binary, caught by its tests.
func Builtins() []Builtin {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		panic(err)
	}
	out := make([]Builtin, 0, len(files))
	for _, f := range files {
		src, err := builtinFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(path.Base(f), ".yaml")
		b := Builtin{Name: name, Path: BuiltinPrefix + name, Source: src}
		var diags diag.List
		b.Header = ReadHeader(b.Path, src, &diags)
		if len(diags) > 0 || b.Header == nil || b.Header.Name != name {
			panic(fmt.Sprintf("built-in template %s: bad header (name %q): %v", name, headerName(b.Header), diags.Err()))
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func headerName(h *Header) string {
	if h == nil {
		return ""
	}
	return h.Name
}

// LookupBuiltin returns the built-in template called name (with or without the template:
// prefix). The error names the templates there are, with a suggestion.
func LookupBuiltin(name string) (Builtin, error) {
	name = strings.TrimPrefix(name, BuiltinPrefix)
	var names []string
	for _, b := range Builtins() {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Builtin{}, fmt.Errorf("no built-in template %q%s (there are: %s; `sluice templates list` describes them)",
		name, diag.DidYouMean(name, names), strings.Join(names, ", "))
}
