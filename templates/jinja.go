package templates

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/sluicehq/sluice/internal/diag"
)

// HasJinja reports whether src holds Jinja syntax. A file without any is loaded as it is, so
// that its positions and bytes are unchanged.
func HasJinja(src []byte) bool {
	return bytes.Contains(src, []byte("{{")) || bytes.Contains(src, []byte("{%")) || bytes.Contains(src, []byte("{#"))
}

// hasStatement reports whether src holds a Jinja statement or comment tag.
func hasStatement(src []byte) bool {
	return bytes.Contains(src, []byte("{%")) || bytes.Contains(src, []byte("{#"))
}

// unset is the value of an optional Dataflow parameter that was not given and has no default.
// It renders as a marker, so that a mapping key or list item whose value is exactly the marker
// can be removed after YAML parsing. It is false in {% if %}, and `default` replaces it, as
// Jinja's Undefined.
type unset bool

func (unset) String() string { return unsetMarker }

const unsetMarker = "__sluice_unset__"

// environment returns a Jinja environment with gonja's filters and tests, where `default`,
// `defined` and `undefined` treat unset parameters as undefined.
func environment() *exec.Environment {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	def, _ := filters.Get("default")
	unsetDefault := func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		if isUnset(in) {
			in = exec.AsValue(nil)
		}
		return def(e, in, params)
	}
	_ = filters.Replace("default", unsetDefault)
	_ = filters.Replace("d", unsetDefault)
	_ = filters.Register("local_file", localFile)
	_ = filters.Register("local_path", localPath)
	tojson, _ := filters.Get("tojson")
	_ = filters.Replace("tojson", func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		if _, ok := in.Interface().(emptyHole); ok {
			in = exec.AsValue(emptyHoleText) // the JSON string of the placeholder, as of ""
		}
		return tojson(e, in, params)
	})
	tests := exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests)
	_ = tests.Replace("defined", func(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
		return !(in.IsError() || in.IsNil() || isUnset(in)), nil
	})
	_ = tests.Replace("undefined", func(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
		return in.IsError() || in.IsNil() || isUnset(in), nil
	})
	return &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
		Filters:           filters,
		Tests:             tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           builtins.Methods,
	}
}

var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// localFile is the filter `path | local_file` (sluice adds): the text of a local file, for
// parameters such as the Streaming Data Generator's schemaLocation. A relative path is from the
// working directory. An unset parameter passes through (so that its key is removed).
func localFile(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	v := localPath(e, in, params)
	if v.IsError() || isUnset(v) {
		return v
	}
	b, err := os.ReadFile(v.String())
	if err != nil {
		return exec.AsValue(fmt.Errorf("local_file: cannot read %s: %w", v.String(), pathErr(err)))
	}
	return exec.AsValue(string(b))
}

// localPath is the filter `path | local_path` (sluice adds): the path itself, or an error for a
// URL (gs://, s3://, ...), since sluice reads no object store for a template's files.
func localPath(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	if isUnset(in) {
		return in
	}
	if m := urlScheme.FindString(in.String()); m != "" {
		return exec.AsValue(fmt.Errorf("%s paths are not supported here: copy the file and give its local path", m))
	}
	return in
}

func isUnset(v *exec.Value) bool {
	if v == nil || !v.Val.IsValid() || !v.Val.CanInterface() {
		return false
	}
	_, ok := v.Val.Interface().(unset)
	return ok
}

func jinjaConfig() *config.Config {
	c := config.New()
	c.StrictUndefined = true // Beam: an undefined variable is an error
	c.KeepTrailingNewline = true
	return c
}

// fileLoader reads the root template from memory, and included, imported and extended files
// from disk. A relative name is looked for next to the file that names it, then in the working
// directory (where Beam looks): see Resolve.
type fileLoader struct {
	root    string // the pipeline file's path, as given
	content []byte
	dir     string // the directory of the file whose names this loader resolves
}

func newLoader(path string, src []byte) *fileLoader {
	return &fileLoader{root: path, content: src, dir: filepath.Dir(path)}
}

func (l *fileLoader) Read(path string) (io.Reader, error) {
	if path == l.root {
		return bytes.NewReader(l.content), nil
	}
	path, err := l.Resolve(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, pathErr(err))
	}
	return bytes.NewReader(b), nil
}

// Resolve returns the absolute path of the file called name: name itself when it is absolute,
// else the first of the including file's directory and the working directory that holds it.
// The result is absolute, so that resolving it again (the engine does, in Inherit and Read)
// gives it back unchanged.
func (l *fileLoader) Resolve(name string) (string, error) {
	if name == l.root {
		return name, nil
	}
	if filepath.IsAbs(name) {
		return filepath.Clean(name), nil
	}
	var tried []string
	for _, dir := range []string{l.dir, "."} {
		p, err := filepath.Abs(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %w", name, err)
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if len(tried) == 0 || tried[0] != p {
			tried = append(tried, p)
		}
	}
	return "", fmt.Errorf("file %q not found: looked for %s", name, strings.Join(tried, " and "))
}

func (l *fileLoader) Inherit(from string) (loaders.Loader, error) {
	resolved, err := l.Resolve(from)
	if err != nil {
		return nil, err
	}
	return &fileLoader{root: l.root, content: l.content, dir: filepath.Dir(resolved)}, nil
}

func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// template is a parsed Jinja template. Its text nodes can carry line markers, so that every
// line of the output can be traced back to the template's line.
type template struct {
	path  string
	lines []string
	t     *exec.Template
}

// compile parses src (the content of path) as a Jinja template; marked adds line markers.
func compile(path string, src []byte, marked bool) (tpl *template, err error) {
	tpl = &template{path: path, lines: strings.Split(string(src), "\n")}
	defer func() {
		if p := recover(); p != nil {
			tpl, err = nil, &templateError{line: 1, col: 1, msg: fmt.Sprintf("invalid template: %v", p)}
		}
	}()
	t, err := exec.NewTemplate(path, jinjaConfig(), newLoader(path, src), environment())
	if err != nil {
		return nil, tpl.syntaxError(err)
	}
	tpl.t = t
	if marked {
		markData(t.Root())
	}
	return tpl, nil
}

// render executes the template with vars. A panic of the Jinja engine (it has some, e.g. on
// a division by zero) becomes an error.
func (t *template) render(vars map[string]any) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &templateError{line: 1, col: 1, msg: fmt.Sprintf("cannot render the template: %v", p)}
		}
	}()
	out, err = t.t.ExecuteToString(exec.NewContext(vars))
	if err != nil {
		return "", t.renderError(err)
	}
	return out, nil
}

// Line markers: "\x00<line>\x01" before the text of every template line in the output.
const markStart, markEnd = "\x00", "\x01"

// markData puts a line marker at the start of every line of the root template's text nodes.
// Trimming (`-%}`, `{%-`) is applied here, as the renderer would, so that markers do not stop it.
// Nodes of included or extended files are not reached: their lines map to the line before.
func markData(root *nodes.Template) {
	seen := map[any]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer {
				if seen[v.Interface()] {
					return
				}
				seen[v.Interface()] = true
				if d, ok := v.Interface().(*nodes.Data); ok {
					markNode(d)
					return
				}
				if _, ok := v.Interface().(*nodes.Template); ok && v.Interface() != root {
					return // an extended parent: its lines are another file's
				}
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanInterface() {
					walk(f)
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(root))
}

// markNode applies a text node's trimming and puts a marker before each of its lines.
func markNode(d *nodes.Data) {
	if d.Data == nil {
		return
	}
	out := d.Data.Val
	line := d.Data.Line
	if d.RemoveFirstLineReturn {
		if s, ok := strings.CutPrefix(out, "\r\n"); ok {
			out, line = s, line+1
		} else if s, ok := strings.CutPrefix(out, "\n"); ok {
			out, line = s, line+1
		}
	}
	if d.Trim.Left {
		trimmed := strings.TrimLeft(out, " \r\n\t")
		line += strings.Count(out[:len(out)-len(trimmed)], "\n")
		out = trimmed
	}
	if d.Trim.Right {
		out = strings.TrimRight(out, " \r\n\t")
	}
	if d.RemoveTrailingWhiteSpaceFromLastLine {
		i := strings.LastIndex(out, "\n") + 1
		out = out[:i] + strings.TrimRight(out[i:], " \n\t\r")
	}
	var b strings.Builder
	for i, l := range strings.Split(out, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l != "" {
			b.WriteString(markStart + strconv.Itoa(line+i) + markEnd)
		}
		b.WriteString(l)
	}
	d.Data.Val = b.String()
	d.RemoveFirstLineReturn, d.Trim.Left, d.Trim.Right, d.RemoveTrailingWhiteSpaceFromLastLine = false, false, false, false
}

// lineMap maps the lines of a rendered text to the template's lines.
type lineMap []int

// at returns the template line of rendered line n (1-based); unknown lines map to themselves.
func (m lineMap) at(n int) int {
	if n >= 1 && n <= len(m) && m[n-1] > 0 {
		return m[n-1]
	}
	return n
}

// stripMarkers removes the line markers from a rendered text and returns the template line of
// each output line: that of its first marker, else that of the last marker before it.
func stripMarkers(s string) (string, lineMap) {
	var b strings.Builder
	b.Grow(len(s))
	m := lineMap{0}
	cur, lineHasMark := 1, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case markStart[0]:
			j := strings.IndexByte(s[i:], markEnd[0])
			if j < 0 {
				b.WriteByte(c)
				continue
			}
			if n, err := strconv.Atoi(s[i+1 : i+j]); err == nil {
				cur = n
				if !lineHasMark {
					m[len(m)-1], lineHasMark = n, true
				}
			}
			i += j
		case '\n':
			b.WriteByte(c)
			if !lineHasMark {
				m[len(m)-1] = cur
			}
			m = append(m, cur)
			lineHasMark = false
		default:
			b.WriteByte(c)
		}
	}
	if !lineHasMark {
		m[len(m)-1] = cur
	}
	return b.String(), m
}

var (
	atLine       = regexp.MustCompile(`at line (\d+)`)
	filterCall   = regexp.MustCompile(`invalid call to filter '([^']+)': (.*)$`)
	undefinedVar = regexp.MustCompile(`Unable to evaluate name "([^"]+)"`)
	includedAt   = regexp.MustCompile(`at line (\d+): IncludeControlStructure\(Filename='([^']*)'`)
	notFound     = regexp.MustCompile(`file "([^"]+)" not found: looked for [^\n]*?(?:$|\n)`)
	wrapPrefix   = regexp.MustCompile(`^(unable to execute template: )?((Unable to (render expression|execute controlStructure|render condition) at line \d+|[A-Za-z]+ControlStructure\([^)]*\)|[^:]*\([^)]*\)|[^:"]+ \{[^}]*\}): )+`)
)

// templateError is a problem rendering the template, at a line of the template file.
type templateError struct {
	line, col int
	msg       string
	name      string // the undefined variable, if that is the problem
}

func (e *templateError) Error() string { return e.msg }

// syntaxError turns a gonja parse error into a positioned error.
func (t *template) syntaxError(err error) error {
	var se *parser.SyntaxError
	if errors.As(err, &se) {
		return &templateError{line: se.Line, col: se.Column, msg: "invalid template: " + se.Message}
	}
	msg := err.Error()
	if inner := errors.Unwrap(err); inner != nil {
		msg = inner.Error() // gonja's wrapper repeats the whole source
	}
	return &templateError{line: 1, col: 1, msg: "invalid template: " + msg}
}

// renderError turns a gonja execution error into a positioned error: an undefined variable
// names it; other errors keep gonja's message without its wrapping.
func (t *template) renderError(err error) error {
	msg := err.Error()
	e := &templateError{line: 1, col: 1}
	if m := atLine.FindAllStringSubmatch(msg, -1); m != nil {
		e.line, _ = strconv.Atoi(m[len(m)-1][1])
	}
	where := ""
	if inc := includedAt.FindAllStringSubmatchIndex(msg, -1); inc != nil {
		// The error is in an included file when a line follows its include: reported at
		// the pipeline's include tag, naming the innermost file and its line.
		for k := len(inc) - 1; k >= 0 && where == ""; k-- {
			in := inc[k]
			if inner := atLine.FindAllStringSubmatch(msg[in[1]:], -1); inner != nil {
				e.line, _ = strconv.Atoi(msg[inc[0][2]:inc[0][3]])
				e.col = t.quotedColumn(e.line, msg[inc[0][4]:inc[0][5]])
				where = fmt.Sprintf("in %s, line %s: ", msg[in[4]:in[5]], inner[len(inner)-1][1])
			}
		}
	}
	if m := undefinedVar.FindStringSubmatch(msg); m != nil {
		e.name = m[1]
		e.msg = fmt.Sprintf("%sundefined variable %q", where, m[1])
		if where == "" {
			e.col = t.column(e.line, m[1])
		}
		return e
	}
	if m := notFound.FindStringSubmatch(msg); m != nil {
		// An include or import of a missing file: at the name, when it is on the line.
		e.msg = where + strings.TrimSpace(m[0])
		if where == "" {
			e.col = t.quotedColumn(e.line, m[1])
		}
		return e
	}
	e.msg = "cannot render the template: " + where + wrapPrefix.ReplaceAllString(msg, "")
	if m := filterCall.FindAllStringSubmatch(msg, -1); m != nil {
		// A filter's own error says it all; gonja wraps it in every enclosing call.
		last := m[len(m)-1]
		e.msg = "cannot render the template: " + where + "filter " + last[1] + ": " + last[2]
	}
	return e
}

// column returns the column of the first use of name inside a Jinja tag on line n, or 1.
func (t *template) column(n int, name string) int {
	if n < 1 || n > len(t.lines) {
		return 1
	}
	if i := wordIndex(t.lines[n-1], name); i >= 0 {
		return i + 1
	}
	return 1
}

// quotedColumn returns the column of the quoted name on line n (1-based), or 1.
func (t *template) quotedColumn(n int, name string) int {
	if n >= 1 && n <= len(t.lines) {
		for _, q := range []string{"'", `"`} {
			if i := strings.Index(t.lines[n-1], q+name+q); i >= 0 {
				return i + 1
			}
		}
	}
	return 1
}

// wordIndex returns the index of the first use of name as a word inside a Jinja tag of line l,
// or -1.
func wordIndex(l, name string) int {
	best := -1
	for _, open := range []string{"{{", "{%"} {
		i := strings.Index(l, open)
		for i >= 0 && name != "" {
			j := strings.Index(l[i:], name)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(name)
			if (at == 0 || !isWord(l[at-1])) && (end == len(l) || !isWord(l[end])) {
				if best < 0 || at < best {
					best = at
				}
				break
			}
			i = at + 1
		}
	}
	return best
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// diag converts a template error to a diagnostic of file.
func (e *templateError) pos(file string) diag.Pos {
	return diag.Pos{File: file, Line: e.line, Col: e.col}
}
