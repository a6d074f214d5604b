package yamlfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/internal/diag"
)

// ErrJinja is returned for a Jinja template: it is not YAML before rendering, so Format leaves
// it as it is. docs/fmt.md says which files are templates.
var ErrJinja = errors.New("not formatted: Jinja template")

// ErrRefused is returned when the formatted file would not be faithful to the input (another
// meaning, a lost comment) or would not be stable. The file is left as it is; it is a bug in
// fmt, and the file is worth reporting.
var ErrRefused = errors.New("not formatted")

// Format returns src in the canonical style (docs/fmt.md); file names it in errors. A file that
// is not valid YAML, or that indents with tabs, gives a diag.List whose entries read
// "file:line:col: message". A Jinja template gives ErrJinja, and an output that Format cannot
// vouch for gives an error that wraps ErrRefused.
func Format(file string, orig []byte) ([]byte, error) {
	src := bytes.TrimPrefix(orig, []byte("\ufeff")) // a UTF-8 byte order mark says nothing
	if !utf8.Valid(src) {
		var d diag.List
		d.Add(diag.Pos{File: file, Line: 1, Col: 1}, "not UTF-8 text: not formatted")
		return nil, d.Err()
	}
	src = bytes.ReplaceAll(bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	out, want, err := format(file, src)
	if err != nil {
		return nil, err
	}
	if err := check(file, orig, want, out); err != nil {
		return nil, err
	}
	again, _, err := format(file, out)
	if err != nil || !bytes.Equal(again, out) {
		return nil, fmt.Errorf("%s: %w: formatting the output again would change it; please report this file", file, ErrRefused)
	}
	return out, nil
}

// format prints src once and returns the output with the comments of src, counted by text.
func format(file string, src []byte) ([]byte, map[string]int, error) {
	if bytes.Contains(src, []byte("{%")) || bytes.Contains(src, []byte("{#")) {
		return nil, nil, ErrJinja
	}
	p := newPrinter(file, src)
	if err := p.unicodeBreaks(); err != nil {
		return nil, nil, err
	}
	docs, err := parse(src)
	if err != nil {
		if bytes.Contains(src, []byte("{{")) {
			return nil, nil, ErrJinja
		}
		return nil, nil, p.syntaxError(err)
	}
	block, want := p.scan(docs)
	if err := p.errs.Err(); err != nil {
		return nil, nil, err
	}
	if bytes.Contains(src, []byte("{{")) && (templateHeader(docs) || jinjaOutside(p.src, block)) {
		return nil, nil, ErrJinja
	}
	if err := p.tabs(block, len(p.src)); err != nil {
		return nil, nil, err
	}
	if len(docs) == 0 {
		return commentsOnly(p.src), nil, nil
	}
	// The documents' "---" markers: the first document's only if it has one.
	markers := p.markers
	if !explicitStart(p.src) {
		markers = append([]int{-1}, markers...)
	}
	for i, d := range docs {
		m := 0 // a marker the source does not have (yaml.v3 reads no other way)
		if i < len(markers) {
			m = markers[i]
		}
		p.document(d, m)
	}
	p.flush(math.MaxInt)
	if p.carry != "" { // a comment at the end of the last line, which spans lines
		p.out = append(p.out, outLine{text: spaces(p.levelFor(math.MaxInt)) + p.carry})
	}
	if err := p.errs.Err(); err != nil {
		return nil, nil, err
	}
	if _, err := decodeAll(src); err != nil { // duplicate keys, say
		return nil, nil, p.syntaxError(err)
	}
	return p.render(), want, nil
}

// commentsOnly formats a file without documents: comments and blank lines, if anything. The
// comments lose their indentation; blank lines are kept between them, one for several.
func commentsOnly(src []string) []byte {
	var b strings.Builder
	blank := false
	for _, l := range src {
		t := strings.TrimSpace(l)
		if t == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(t + "\n")
	}
	return []byte(b.String())
}

// parse reads every document of src.
func parse(src []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// decodeAll decodes every document of src as Go values.
func decodeAll(src []byte) ([]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

// templateHeader reports whether a document has a top-level template: key.
func templateHeader(docs []*yaml.Node) bool {
	for _, d := range docs {
		if len(d.Content) == 0 || d.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := d.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "template" {
				return true
			}
		}
	}
	return false
}

// jinjaOutside reports whether "{{" appears outside the content of block scalars. Inside them
// it is data for a plain file, as `sluice run` reads it: the Streaming Data Generator's faker
// syntax, e.g. {{username()}}.
func jinjaOutside(src []string, block map[int]bool) bool {
	for i, l := range src {
		if strings.Contains(l, "{{") && !block[i+1] {
			return true
		}
	}
	return false
}

// explicitStart reports whether the first document starts with "---".
func explicitStart(src []string) bool {
	for _, l := range src {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(l, "%"):
			continue
		case l == "---" || strings.HasPrefix(l, "--- "):
			return true
		}
		return false
	}
	return false
}

// unicodeBreaks reports a NEL, LS or PS character: libyaml reads them as line breaks, which
// fmt does not, so it refuses them rather than guess.
func (p *printer) unicodeBreaks() error {
	for i, l := range p.src {
		if j := strings.IndexAny(l, "\u0085\u2028\u2029"); j >= 0 {
			var d diag.List
			d.Add(diag.Pos{File: p.file, Line: i + 1, Col: utf8.RuneCountInString(l[:j]) + 1},
				"Unicode line break character %U: not formatted", []rune(l[j:])[0]).
				Detail = "replace it with a newline or, inside a quoted string, an escape such as \\u2028"
			return d.Err()
		}
	}
	return nil
}

// tabs reports the first tab in the indentation of a line up to line upto, block scalar
// content aside (a tab there is text).
func (p *printer) tabs(block map[int]bool, upto int) error {
	for i, l := range p.src[:min(upto, len(p.src))] {
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if j := strings.IndexByte(lead, '\t'); j >= 0 && !block[i+1] && strings.TrimSpace(l) != "" {
			var d diag.List
			d.Add(diag.Pos{File: p.file, Line: i + 1, Col: j + 1}, "tab character in the indentation").
				Detail = "YAML indents with spaces; replace the tab with spaces"
			return d.Err()
		}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// syntaxError positions a yaml.v3 error at its line and the first character there, or reports
// a tab in the indentation up to that line, the likelier cause.
func (p *printer) syntaxError(err error) error {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if terr := p.tabs(nil, line); terr != nil {
		return terr
	}
	col := 1
	if line >= 1 && line <= len(p.src) {
		col = len(p.src[line-1]) - len(strings.TrimLeft(p.src[line-1], " \t")) + 1
	}
	var d diag.List
	d.Add(diag.Pos{File: p.file, Line: line, Col: col}, "invalid YAML: %s", msg)
	return d.Err()
}

// check verifies that out means what src means and has every comment of want.
func check(file string, src []byte, want map[string]int, out []byte) error {
	before, err := decodeAll(src)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	after, err := decodeAll(out)
	if err != nil {
		return fmt.Errorf("%s: %w: the output would not be valid YAML (%w); please report this file", file, ErrRefused, err)
	}
	if path, ok := equal(before, after, ""); !ok {
		return fmt.Errorf("%s: %w: the output would mean something else at %s; please report this file", file, ErrRefused, shownPath(path))
	}
	if lost := lostComments(file, want, out); len(lost) > 0 {
		return fmt.Errorf("%s: %w: the output would lose the comment %s; please report this file", file, ErrRefused, strings.Join(lost, ", "))
	}
	return nil
}

// shownPath turns the path of a difference between lists of documents into what a user reads:
// "pipeline.transforms[1]" in the first document, "document 2: ..." in another.
func shownPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "[0]"); ok {
		path = strings.TrimPrefix(rest, ".")
	}
	if path == "" {
		return "the top"
	}
	return path
}

// lostComments returns the comments of want that are not at the end of a line of out, outside
// its scalars' text, as often as want counts them. It reads the output's text, not yaml.v3's
// comments, which yaml.v3 drops in a few places (after an empty sequence item, say).
func lostComments(file string, want map[string]int, out []byte) []string {
	docs, err := parse(out)
	if err != nil {
		return []string{err.Error()}
	}
	p := newPrinter(file, out)
	p.scan(docs)
	left := maps.Clone(want)
	for i, l := range p.src {
		if p.text[i+1] {
			continue
		}
		l = strings.TrimRight(l, " ")
		for j := strings.IndexByte(l, '#'); j >= 0; {
			if left[l[j:]] > 0 { // one comment a line, the longest
				left[l[j:]]--
				break
			}
			k := strings.IndexByte(l[j+1:], '#')
			if k < 0 {
				break
			}
			j += k + 1
		}
	}
	var lost []string
	for c, n := range left {
		if n > 0 {
			lost = append(lost, strconv.Quote(c))
		}
	}
	sort.Strings(lost)
	return lost
}

// equal compares decoded YAML values, NaN equal to itself, and returns the path of the first
// difference.
func equal(a, b any, path string) (string, bool) {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := equal(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := equal(v, w, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case float64:
		y, ok := b.(float64)
		if ok && math.IsNaN(x) && math.IsNaN(y) {
			return "", true
		}
	}
	if !reflect.DeepEqual(a, b) {
		return path, false
	}
	return "", true
}
