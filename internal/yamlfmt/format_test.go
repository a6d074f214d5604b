package yamlfmt

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// corpus returns every YAML file of examples/ and testdata/ (recursively), the built-in
// templates, this package's golden inputs and the repository's pre-commit hooks.
func corpus(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"../../examples", "../../testdata", "../../templates/builtin", "testdata/golden"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, "../../.pre-commit-hooks.yaml")
	if len(files) < 20 {
		t.Fatalf("found only %d files to format", len(files))
	}
	return files
}

// TestCorpus is the acceptance test of `sluice fmt`: for every pipeline file of the
// repository, fmt(fmt(x)) == fmt(x), every comment of x is in fmt(x), and both decode to the
// same values. Jinja templates are left alone; invalid files give a positioned error.
func TestCorpus(t *testing.T) {
	var changed, jinja int
	for _, path := range corpus(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Format(path, src)
		switch {
		case errors.Is(err, ErrJinja):
			jinja++
			if !bytes.Contains(src, []byte("{{")) && !bytes.Contains(src, []byte("{%")) {
				t.Errorf("%s: reported as a Jinja template, but has no Jinja", path)
			}
			continue
		case err != nil:
			if _, perr := parse(src); perr == nil {
				t.Errorf("%s: %v", path, err)
			} else if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("%s: the error is not positioned: %v", path, err)
			}
			continue
		}
		if strings.HasSuffix(path, ".pre-commit-hooks.yaml") && !bytes.Equal(out, src) {
			t.Errorf("%s is not formatted:\n%s", path, Diff(path, path, src, out))
		}
		if !bytes.Equal(out, src) && !strings.HasPrefix(path, "testdata") {
			changed++
			t.Logf("%s would change:\n%s", path, Diff(path, path, src, out))
		}
		assertFaithful(t, path, src, out)
	}
	t.Logf("%d repository files would change, %d Jinja templates left alone", changed, jinja)
}

// assertFaithful checks out, the formatted src: stable, same values, every comment kept, and
// the style's basic rules.
func assertFaithful(t *testing.T, path string, src, out []byte) {
	t.Helper()
	again, err := Format(path, out)
	if err != nil {
		t.Errorf("%s: formatting the output: %v", path, err)
	} else if !bytes.Equal(again, out) {
		t.Errorf("%s: not idempotent:\n%s", path, Diff("fmt(x)", "fmt(fmt(x))", out, again))
	}
	before, err1 := decodeAll(src)
	after, err2 := decodeAll(out)
	if err1 != nil || err2 != nil {
		t.Errorf("%s: decoding: %v, %v", path, err1, err2)
	} else if at, ok := equal(before, after, ""); !ok {
		t.Errorf("%s: the meaning changed at %s", path, at)
	}
	docs, err := parse(src)
	if err != nil {
		t.Fatal(err)
	}
	// Every comment line of the input, as yaml.v3 reads it, is in the output text as often.
	rest := string(out)
	for _, d := range docs {
		walkComments(d, func(c string) {
			i := strings.Index(rest, c)
			if i < 0 {
				t.Errorf("%s: comment %q lost", path, c)
				return
			}
			rest = rest[:i] + rest[i+len(c):]
		})
	}
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		t.Errorf("%s: no final newline", path)
	}
	if bytes.HasSuffix(out, []byte("\n\n")) || bytes.HasPrefix(out, []byte("\n")) {
		t.Errorf("%s: blank lines at the start or end", path)
	}
	for i, l := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(l, " ") && !inBlockScalar(src, l) {
			t.Errorf("%s: output line %d has trailing spaces: %q", path, i+1, l)
		}
		if strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
			t.Errorf("%s: output line %d is indented with a tab", path, i+1)
		}
	}
}

// inBlockScalar reports whether line (with trailing spaces) is text of a block scalar of src,
// where trailing spaces are part of the value.
func inBlockScalar(src []byte, line string) bool {
	return bytes.Contains(src, []byte(strings.TrimLeft(line, " ")+"\n"))
}

func walkComments(n *yaml.Node, f func(string)) {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for _, l := range commentLines(c) {
			f(l)
		}
	}
	for _, c := range n.Content {
		walkComments(c, f)
	}
}

// TestGolden formats each testdata/golden/NAME.yaml and compares it with NAME.yaml.golden.
// go test ./internal/yamlfmt -run Golden -update rewrites the golden files.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.yaml")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Format(path, src)
			if err != nil {
				t.Fatal(err)
			}
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s:\n%s", golden, Diff(golden, "output", want, out))
			}
			assertFaithful(t, path, src, out)
		})
	}
}
