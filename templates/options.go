package templates

import (
	"os"
	"path/filepath"
	"strings"
)

// optionsFile finds the options file NAME of the template at path, where Google's tools find
// it, and returns its path and content; when there is none, the places it looked. In order:
//
//  1. options/NAME.yaml next to the template: the layout the launcher runs in, where the
//     template is staged as template.yaml beside the options/ its filesToCopy lists;
//  2. options/NAME.yaml in the working directory: the launcher's own lookup (it opens the
//     relative path options/NAME.yaml);
//  3. ../python/options/NAME.yaml from the template's directory: DataflowTemplates' source
//     layout (yaml/src/main/yaml/X.yaml beside yaml/src/main/python/options/), as Google's
//     template generator reads it;
//  4. NAME.yaml next to the template.
//
// A built-in template's options files are embedded beside it (builtin/options/NAME.yaml).
func optionsFile(path, name string) (file string, src []byte, tried []string) {
	base := name + ".yaml"
	if b, ok := strings.CutPrefix(path, BuiltinPrefix); ok && b != "" {
		f := "builtin/options/" + base
		if src, err := builtinFS.ReadFile(f); err == nil {
			return BuiltinPrefix + "options/" + base, src, nil
		}
		return "", nil, []string{"options/" + base + " among the built-in templates"}
	}
	dir := filepath.Dir(path)
	for _, f := range []string{
		filepath.Join(dir, "options", base),
		filepath.Join("options", base),
		filepath.Join(dir, "..", "python", "options", base),
		filepath.Join(dir, base),
	} {
		if src, err := os.ReadFile(f); err == nil {
			return f, src, nil
		}
		tried = append(tried, f)
	}
	return "", nil, dedupe(tried)
}

// dedupe returns list without repeated entries (options/ next to a template in the working
// directory is also options/ of the working directory).
func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
