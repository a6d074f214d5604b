package templates

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/secret"
	"gopkg.in/yaml.v3"
)

// Input is what the command line gives a template.
type Input struct {
	// Params are the parameters in the order given; a later value of a name wins.
	Params []Param
	// JinjaVariables are Beam's --jinja_variables.
	JinjaVariables map[string]any
}

// Result is a rendered pipeline file.
type Result struct {
	// Header is the template header, or nil.
	Header *Header
	// Source is the text to load: the file itself when it holds no Jinja, else the rendered text.
	Source []byte
	// Doc is the rendered YAML document with unset optional parameters removed, or nil when the
	// file was not rendered (then Source is parsed as it is).
	Doc *yaml.Node
	// Secrets are the values that must never be shown: password parameters and the values of
	// ${env:NAME} and ${file:PATH} references.
	Secrets *secret.Set
	// Warnings are problems that do not stop the template, at the template file's positions:
	// variables it uses but does not declare (dropped, as Dataflow does).
	Warnings diag.List

	lines   lineMap
	display string
	masked  string // the rendered text with secrets masked, before pruning
	docText string // the text Doc was parsed from: placeholders where values were placed
	// secretNodes are the scalars of Doc that hold a secret, with how each is shown.
	secretNodes map[*yaml.Node]string
}

// Line returns the template file's line of line n of DocSource.
func (r *Result) Line(n int) int { return r.lines.at(n) }

// Display returns the rendered pipeline to show a user: secrets masked, unset optional
// parameters removed.
func (r *Result) Display() string { return r.display }

// MaskedSource returns Source with every secret replaced by its mask (<secret:NAME>, or the
// reference that gave it): the rendered text of the template with those in place of the values.
func (r *Result) MaskedSource() []byte {
	if r.masked == "" {
		return r.Source
	}
	return []byte(r.masked)
}

// DocSource returns the text whose lines Doc's positions are in: Source, or where values were
// placed, the rendered text with their placeholders (it holds no secret).
func (r *Result) DocSource() []byte {
	if r.Doc == nil || r.docText == "" {
		return r.Source
	}
	return []byte(r.docText)
}

// DisplayDoc returns a copy of Doc where every scalar that holds a secret shows its mask, or
// nil when the file was not rendered. Its positions are Doc's: a problem found in it is the
// problem found in Doc, told without the secrets.
func (r *Result) DisplayDoc() *yaml.Node { return r.displayDoc(r.Doc) }

func (r *Result) displayDoc(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if shown, ok := r.secretNodes[n]; ok {
		c.Value, c.Tag = shown, "!!str"
	}
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = r.displayDoc(e)
		}
	}
	if n.Alias != nil {
		c.Alias = r.displayDoc(n.Alias)
	}
	return &c
}

// HasSecrets reports whether Doc holds a secret.
func (r *Result) HasSecrets() bool { return len(r.secretNodes) > 0 }

// binding is a string value bound to a template variable.
type binding struct {
	name    string
	value   string     // the value to render with
	display string     // what to show instead when it is secret
	spec    *ParamSpec // its declaration, or nil
	unsafe  bool       // it is rendered as a placeholder to check and place it (needsHole)
	hole    string     // the placeholder
}

// Render validates the parameters of the template at path (content src) against its header
// and renders it. Problems come as a diag.List positioned in the template file.
func Render(path string, src []byte, in Input) (*Result, error) {
	var diags diag.List
	res := &Result{Source: src, Secrets: &secret.Set{}, display: string(src)}
	res.Header = ReadHeader(path, src, &diags)
	vars, binds := bind(path, src, res.Header, in, res.Secrets, &diags)
	if len(diags) > 0 {
		return nil, diags.Err()
	}
	if !HasJinja(src) || (res.Header == nil && len(in.Params) == 0 && in.JinjaVariables == nil && !hasStatement(src)) {
		// A plain file given no variables is rendered only if it has a Jinja statement or
		// comment: a bare {{ }} there is more likely data, e.g. the Streaming Data
		// Generator's faker syntax (docs/templates.md).
		return res, nil
	}
	if res.Header != nil {
		res.Warnings = dropUndeclared(path, src, vars)
	}
	r := &renderer{path: path, src: src, vars: vars, binds: binds, diags: &diags}
	if !r.run(res) {
		return nil, diags.Err() // no message quotes a secret: see secretFree, blame, checkKeys
	}
	return res, nil
}

// bind validates the given parameters against the header and returns the template variables
// and the string values among them.
func bind(path string, src []byte, h *Header, in Input, secrets *secret.Set, diags *diag.List) (map[string]any, []*binding) {
	vars := map[string]any{}
	var binds []*binding
	add := func(name, value string, p *ParamSpec, from string) {
		if from == "" {
			from = "the command line"
		}
		b := &binding{name: name, value: value, display: value, spec: p}
		if secret.HasRef(value) {
			v, refs, err := secret.Expand(value)
			if err != nil {
				at := diag.Pos{File: path}
				if p != nil {
					at = p.Pos
				}
				diags.Add(at, "parameter %q (%s): %v", name, from, err)
				return
			}
			for _, r := range refs {
				secrets.Add(r.Value, r.Text)
			}
			b.value = v
		}
		if p != nil {
			if msg := p.check(b.value, b.value != b.display); msg != "" && from != "the default" {
				d := diags.Add(p.Pos, "parameter %q %s", name, msg)
				d.Detail = "given with " + from
			}
			if p.Secret() {
				b.display = "<secret:" + name + ">"
				secrets.Add(b.value, b.display)
			}
		}
		vars[name] = b.value
		binds = append(binds, b)
	}
	given := map[string]Param{}
	var order []string
	for _, p := range in.Params {
		if _, ok := given[p.Name]; !ok {
			order = append(order, p.Name)
		}
		given[p.Name] = p
	}
	for k, v := range in.JinjaVariables {
		if s, ok := v.(string); ok {
			add(k, s, nil, "--jinja_variables")
			continue
		}
		vars[k] = v
	}
	if h == nil {
		for _, name := range order {
			add(name, given[name].Value, nil, given[name].From)
		}
		return vars, binds
	}
	declared := map[string]bool{}
	var names []string
	for _, p := range h.Params {
		declared[p.Name] = true
		names = append(names, p.Name)
	}
	var used map[string]bool
	for _, name := range order {
		if declared[name] || h.missingGroup {
			continue
		}
		if used == nil {
			used = variablesUsed(src)
		}
		if used[name] {
			// Google's launcher passes every parameter that names a variable of the pipeline
			// to Jinja, declared or not (its header is metadata): so do we.
			add(name, given[name].Value, nil, given[name].From)
			continue
		}
		diags.Add(h.ParamsPos, "unknown parameter %q%s", name, diag.DidYouMean(name, names)).
			Detail = fmt.Sprintf("given with %s; the template declares: %s", given[name].From, strings.Join(names, ", "))
	}
	for _, p := range h.Params {
		g, ok := given[p.Name]
		_, isVar := vars[p.Name]
		switch {
		case ok:
			add(p.Name, g.Value, p, g.From)
		case isVar:
			// Given with --jinja_variables.
		case p.Default != nil:
			add(p.Name, *p.Default, p, "the default")
		case p.Required:
			d := diags.Add(p.Pos, "missing required parameter %q", p.Name)
			d.Detail = "give it with -p " + p.Name + "=VALUE"
			if p.Help != "" {
				d.Detail += ": " + p.Help
			}
			if p.Example != "" && !p.Secret() {
				d.Detail += " (e.g. " + p.Example + ")"
			}
		default:
			vars[p.Name] = unset(false)
		}
	}
	return vars, binds
}

// renderer renders a template with the real values and with placeholders, and checks that the
// values do not change the structure of the YAML.
type renderer struct {
	path     string
	src      []byte
	vars     map[string]any
	binds    []*binding
	diags    *diag.List
	marked   *template
	plain    *template
	sLines   lineMap // of the text rendered with every placeholder
	pLines   lineMap // of the text the document is parsed from
	placedIn map[*yaml.Node][]*binding
}

func (r *renderer) run(res *Result) bool {
	var err error
	if r.marked, err = compile(r.path, r.src, true); err != nil {
		r.templateError(err)
		return false
	}
	plain, _ := compile(r.path, r.src, false)
	r.plain = plain
	real, lines, ok := r.render(nil)
	if !ok {
		return false
	}
	res.Source, res.lines = []byte(real), lines
	// The markers must not change the output (they could, inside {% set %} blocks and filters
	// over them): then positions stay those of the rendered text.
	exact := true
	if out, err := plain.render(r.values(nil)); err != nil || out != real {
		res.lines, exact = nil, false
	}
	holes := r.placeholders()
	shape, sLines, ok := r.renderHoles(holes)
	if !ok {
		return false
	}
	r.sLines = sLines
	sDoc, err := parseYAML(shape)
	if err != nil {
		r.yamlError(err, sLines)
		return false
	}
	// The values the template prints as they are get placed through their placeholders; the
	// rest is the real text, and must keep the placeholders' structure.
	placed := holes
	text, pLines, ok := r.splice(shape, real, holes, lines)
	if !ok {
		placed, text, pLines = r.placeEach(holes, real, lines)
	}
	r.pLines = pLines
	doc, err := parseYAML(text)
	if err != nil || !r.sameShape(sDoc, doc) {
		r.blame(sDoc, doc, holes, placed, err, pLines)
		return false
	}
	res.docText = text
	r.markTransformed(sDoc, doc, res)
	r.place(doc, placed, res)
	if exact {
		res.lines = pLines
	}
	prune(doc)
	r.checkUnset(doc, res)
	res.Doc = doc
	res.display, res.masked = r.display(plain, res, doc)
	return len(*r.diags) == 0
}

// renderHoles renders the template with the placeholders of holes. An empty value whose
// placeholder the template cannot use (a method called on it) is rendered as it is: it can
// change nothing, and is only not placed.
func (r *renderer) renderHoles(holes map[string]bool) (string, lineMap, bool) {
	if out, err := r.marked.render(r.values(holes)); err == nil {
		text, lines := stripMarkers(out)
		return text, lines, true
	}
	for _, b := range r.binds {
		if b.unsafe && b.value == "" {
			b.unsafe = false
			delete(holes, b.name)
		}
	}
	return r.render(holes)
}

// placeEach finds the values whose placeholders line up with the real text one at a time
// (another value's use made the texts differ), and splices those.
func (r *renderer) placeEach(holes map[string]bool, real string, lines lineMap) (map[string]bool, string, lineMap) {
	placed := map[string]bool{}
	for name := range holes {
		one := map[string]bool{name: true}
		if text, _, ok := r.render(one); ok {
			if _, _, ok := r.splice(text, real, one, lines); ok {
				placed[name] = true
			}
		}
	}
	if len(placed) > 0 {
		if text, _, ok := r.render(placed); ok {
			if spliced, pLines, ok := r.splice(text, real, placed, lines); ok {
				return placed, spliced, pLines
			}
		}
	}
	return map[string]bool{}, real, lines
}

// values returns the variables with the values of holes replaced by their placeholders.
func (r *renderer) values(holes map[string]bool) map[string]any {
	vars := make(map[string]any, len(r.vars))
	for k, v := range r.vars {
		vars[k] = v
	}
	for _, b := range r.binds {
		if holes[b.name] {
			vars[b.name] = b.holeValue()
		}
	}
	return vars
}

// render renders the marked template with holes placeholdered and returns the text and its
// line map.
func (r *renderer) render(holes map[string]bool) (string, lineMap, bool) {
	out, err := r.marked.render(r.values(holes))
	if err != nil {
		r.templateError(r.secretFree(err, holes))
		return "", nil, false
	}
	text, lines := stripMarkers(out)
	return text, lines, true
}

// secretFree returns a rendering error that quotes no secret: the error of the same render
// with the secrets' masks in place of their values, when it fails at the same line; else
// one that names the secret parameters only.
func (r *renderer) secretFree(err error, holes map[string]bool) error {
	vars := r.values(holes)
	var names []*binding
	for _, b := range r.binds {
		if b.secret() && !holes[b.name] {
			vars[b.name] = b.display
			names = append(names, b)
		}
	}
	te, ok := err.(*templateError)
	if len(names) == 0 || !ok {
		return err
	}
	if _, merr := r.marked.render(vars); merr != nil {
		if mte, ok := merr.(*templateError); ok && mte.line == te.line {
			return mte
		}
	}
	return &templateError{line: te.line, col: te.col, msg: fmt.Sprintf(
		"cannot render the template with the value of %s (the message is not shown: it could quote a secret)",
		bindingNames(names))}
}

// placeholders gives a neutral placeholder to every value that needs one (see needsHole).
func (r *renderer) placeholders() map[string]bool {
	holes := map[string]bool{}
	for i, b := range r.binds {
		if b.needsHole() {
			b.unsafe, b.hole = true, holeMark+strconv.Itoa(i)+"_"
			holes[b.name] = true
		}
	}
	return holes
}

var safeChars = regexp.MustCompile(`^[A-Za-z0-9_.:/+=~@$()<>;?^-]+( [A-Za-z0-9_.:/+=~@$()<>;?^-]+)*$`)

// safeValue reports whether v renders as one plain scalar wherever a template puts it.
func safeValue(v string) bool {
	if v == "" {
		return true
	}
	if !safeChars.MatchString(v) || strings.Contains(v, ": ") || strings.HasSuffix(v, ":") ||
		strings.HasPrefix(v, "- ") || strings.HasPrefix(v, "? ") || strings.HasPrefix(v, "@") {
		return false
	}
	var m map[string]any
	if yaml.Unmarshal([]byte("k: "+v), &m) != nil || len(m) != 1 {
		return false
	}
	_, isMap := m["k"].(map[string]any)
	_, isList := m["k"].([]any)
	return !isMap && !isList
}

func (r *renderer) templateError(err error) {
	te, ok := err.(*templateError)
	if !ok {
		r.diags.Add(diag.Pos{File: r.path}, "%v", err)
		return
	}
	d := r.diags.Add(te.pos(r.path), "%s", te.msg)
	if te.name != "" {
		var names []string
		for k := range r.vars {
			names = append(names, k)
		}
		d.Summary += diag.DidYouMean(te.name, names)
		d.Detail = "give it with -p " + te.name + "=VALUE or --jinja_variables, or use {{ " + te.name + " | default(...) }}"
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseYAML(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// yamlError reports a YAML syntax error of a rendered text at the template's line.
func (r *renderer) yamlError(err error, lines lineMap) {
	msg, line := yamlMessage(err)
	r.diags.Add(diag.Pos{File: r.path, Line: lines.at(line), Col: 1}, "invalid YAML after rendering the template: %s", msg).
		Detail = "check the indentation around the template's tags; `sluice render` shows the rendered file"
}

// yamlMessage splits a YAML error into its message and line (1 when unknown).
func yamlMessage(err error) (string, int) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return m[2], line
	}
	return strings.TrimPrefix(err.Error(), "yaml: "), 1
}
