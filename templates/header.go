package templates

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// Header is the `template:` header of a Dataflow-style template.
type Header struct {
	Name        string
	DisplayName string
	Description string
	// Params are the declared parameters, in the header's order (option groups expanded).
	Params []*ParamSpec
	// Pos is the position of the `template:` key; ParamsPos that of its `parameters:` key.
	Pos, ParamsPos diag.Pos
	// missingGroup is set when an option group could not be read: then a given parameter the
	// header does not declare may be one of its, and is not reported as unknown.
	missingGroup bool
}

// Parameter types, as Dataflow names them.
const (
	TypeText     = "text"
	TypeInteger  = "integer"
	TypeBoolean  = "boolean"
	TypeDouble   = "double"
	TypeMap      = "map"
	TypeEnum     = "enum"
	TypePassword = "password"
)

var paramTypes = []string{TypeText, TypeInteger, TypeBoolean, TypeDouble, TypeMap, TypeEnum, TypePassword}

// ParamSpec is one declared parameter.
type ParamSpec struct {
	Name, Label, Description, Help, Example string
	// Default is the default value, if there is one.
	Default  *string
	Required bool
	// Type is one of the Type constants (default text).
	Type string
	// Regexes must all match a value (sluice adds).
	Regexes []*regexp.Regexp
	// EnumOptions are the values an enum parameter accepts (sluice adds).
	EnumOptions []string
	// Unsupported, when set, says why sluice rejects any value of this parameter and what to
	// use instead (sluice adds): a Dataflow parameter that has no meaning here is an error,
	// never silently ignored.
	Unsupported string
	// Pos is the position of the parameter's declaration.
	Pos        diag.Pos
	defaultPos diag.Pos
}

// Secret reports whether the parameter's value must never be shown.
func (p *ParamSpec) Secret() bool { return p.Type == TypePassword }

// Param returns the declared parameter of that name, or nil (also for a nil header: a file
// that is no Dataflow-style template).
func (h *Header) Param(name string) *ParamSpec {
	if h == nil {
		return nil
	}
	for _, p := range h.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// ReadHeader finds and decodes the `template:` header of the file at path (content src), before
// any rendering: the header is the top-level `template:` key and the indented lines below it.
// It returns nil when there is no header. Problems are added to diags.
func ReadHeader(path string, src []byte, diags *diag.List) *Header {
	text, start := TopLevelBlock(src, "template")
	if start < 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		diags.Add(diag.Pos{File: path, Line: start + 1, Col: 1}, "invalid template header: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	root := doc.Content[0]
	d := &headerDecoder{file: path, diags: diags}
	h := &Header{Pos: d.at(root.Content[0])}
	node := root.Content[1]
	if node.Kind != yaml.MappingNode {
		diags.Add(d.at(node), "template must be a mapping with name, description and parameters")
		return nil
	}
	var params, options *yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		switch k.Value {
		case "name":
			h.Name = d.str(v, "template name")
		case "display_name":
			h.DisplayName = d.str(v, "display_name")
		case "description":
			h.Description = d.str(v, "description")
		case "parameters":
			h.ParamsPos, params = d.at(k), v
		case "options_file":
			options = v
		}
		// Other keys (category, flex_container_name, ...) are Dataflow's build metadata.
	}
	if h.ParamsPos.Line == 0 {
		h.ParamsPos = h.Pos
	}
	groups := d.optionGroups(options)
	if params != nil {
		d.params(params, groups, h)
	}
	d.checkDuplicates(h)
	return h
}

type headerDecoder struct {
	file  string
	diags *diag.List
	// noFile is set when an options file was not found: its groups are then unknown, which is
	// not reported again for each.
	noFile bool
}

// TopLevelBlock returns the top-level key of src and the indented lines below it, preceded by
// as many empty lines as come before it (so that YAML positions in it are those of src), and
// the 0-based line where it starts; -1 when src has no such key. Blocks read this way (the
// template header, the tests) are read before rendering, so they must not depend on Jinja.
func TopLevelBlock(src []byte, key string) (string, int) {
	lines := strings.Split(string(src), "\n")
	start := -1
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, key); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ":") {
			start = i
			break
		}
	}
	if start < 0 {
		return "", -1
	}
	end := start + 1
	for end < len(lines) {
		l := lines[end]
		if l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '#' && l[0] != '-' {
			break
		}
		end++
	}
	return strings.Repeat("\n", start) + strings.Join(lines[start:end], "\n"), start
}

func (d *headerDecoder) at(n *yaml.Node) diag.Pos { return diag.At(d.file, n) }

func (d *headerDecoder) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		d.diags.Add(d.at(n), "%s must be a string", what)
		return ""
	}
	return n.Value
}

// optionGroup is a named list of parameter declarations from an options file.
type optionGroup struct {
	file   string
	params *yaml.Node
}

// optionGroups reads the options files named by options_file (see optionsFile).
func (d *headerDecoder) optionGroups(list *yaml.Node) map[string]optionGroup {
	groups := map[string]optionGroup{}
	if list == nil {
		return groups
	}
	if list.Kind != yaml.SequenceNode {
		d.diags.Add(d.at(list), "options_file must be a list of option file names")
		return groups
	}
	for _, n := range list.Content {
		name := d.str(n, "an options_file entry")
		if name == "" {
			continue
		}
		file, src, tried := optionsFile(d.file, name)
		if file == "" {
			d.diags.Add(d.at(n), "options file %q not found", name).
				Detail = "looked for " + strings.Join(tried, ", ")
			d.noFile = true
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 {
			d.diags.Add(diag.Pos{File: file, Line: 1, Col: 1}, "invalid options file: %v", err)
			continue
		}
		od := &headerDecoder{file: file, diags: d.diags}
		opts := mappingValue(doc.Content[0], "options")
		if opts == nil || opts.Kind != yaml.SequenceNode {
			d.diags.Add(od.at(doc.Content[0]), "an options file needs options: a list of {name, parameters}")
			continue
		}
		for _, g := range opts.Content {
			gname, params := mappingValue(g, "name"), mappingValue(g, "parameters")
			if gname == nil || params == nil {
				d.diags.Add(od.at(g), "an option group needs a name and parameters")
				continue
			}
			groups[gname.Value] = optionGroup{file: file, params: params}
		}
	}
	return groups
}

// params decodes the parameters list: declarations, or names of option groups.
func (d *headerDecoder) params(list *yaml.Node, groups map[string]optionGroup, h *Header) {
	if list.Kind != yaml.SequenceNode {
		d.diags.Add(d.at(list), "parameters must be a list of parameter declarations")
		return
	}
	for _, n := range list.Content {
		if n.Kind == yaml.ScalarNode {
			g, ok := groups[n.Value]
			if !ok && d.noFile {
				h.missingGroup = true
				continue
			}
			if !ok {
				names := make([]string, 0, len(groups))
				for k := range groups {
					names = append(names, k)
				}
				d.diags.Add(d.at(n), "unknown option group %q%s", n.Value, diag.DidYouMean(n.Value, names)).
					Detail = "a name in parameters must be an option group of a file listed in options_file"
				h.missingGroup = true
				continue
			}
			(&headerDecoder{file: g.file, diags: d.diags}).params(g.params, nil, h)
			continue
		}
		if p := d.param(n); p != nil {
			h.Params = append(h.Params, p)
		}
	}
}

// param decodes one parameter declaration.
func (d *headerDecoder) param(n *yaml.Node) *ParamSpec {
	if n.Kind != yaml.MappingNode {
		d.diags.Add(d.at(n), "a parameter must be a mapping with at least a name")
		return nil
	}
	p := &ParamSpec{Type: TypeText, Pos: d.at(n)}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			p.Name = d.str(v, "name")
			p.Pos = d.at(v)
		case "label":
			p.Label = d.str(v, "label")
		case "description":
			p.Description = d.str(v, "description")
		case "help", "helpText":
			p.Help = d.str(v, "help")
		case "example":
			p.Example = d.str(v, "example")
		case "default":
			if v.Kind == yaml.ScalarNode {
				s := v.Value
				p.Default, p.defaultPos = &s, d.at(v)
			} else {
				b, _ := yaml.Marshal(v)
				s := strings.TrimSpace(string(b))
				p.Default, p.defaultPos = &s, d.at(v)
			}
		case "required":
			var b bool
			if v.Decode(&b) != nil {
				d.diags.Add(d.at(v), "required must be true or false, not %q", v.Value)
				ok = false
			}
			p.Required = b
		case "optional", "isOptional":
			var b bool
			if v.Decode(&b) == nil {
				p.Required = !b
			}
		case "type":
			p.Type = strings.ToLower(d.str(v, "type"))
			if !contains(paramTypes, p.Type) {
				d.diags.Add(d.at(v), "unknown parameter type %q%s", v.Value, diag.DidYouMean(v.Value, paramTypes)).
					Detail = "types: " + strings.Join(paramTypes, ", ")
				ok = false
			}
		case "regexes":
			ok = d.regexes(v, p) && ok
		case "enum_options", "enumOptions":
			ok = d.enumOptions(v, p) && ok
		case "unsupported":
			p.Unsupported = d.str(v, "unsupported")
		}
		// Other keys (order, parentName, hiddenUi, ...) are Dataflow's UI metadata.
	}
	if p.Name == "" {
		d.diags.Add(d.at(n), "a parameter needs a name")
		return nil
	}
	if p.Type == TypeEnum && len(p.EnumOptions) == 0 {
		d.diags.Add(p.Pos, "enum parameter %q needs enum_options: the values it accepts", p.Name)
		ok = false
	}
	if ok && p.Default != nil {
		if msg := p.check(*p.Default, false); msg != "" {
			d.diags.Add(p.defaultPos, "the default of parameter %q %s", p.Name, msg)
		}
	}
	return p
}

func (d *headerDecoder) regexes(v *yaml.Node, p *ParamSpec) bool {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	ok := true
	for _, r := range items {
		re, err := regexp.Compile(d.str(r, "a regex"))
		if err != nil {
			d.diags.Add(d.at(r), "invalid regex: %v", err)
			ok = false
			continue
		}
		p.Regexes = append(p.Regexes, re)
	}
	return ok
}

// enumOptions reads a list of values, or of {value, label, description} as Dataflow writes them.
func (d *headerDecoder) enumOptions(v *yaml.Node, p *ParamSpec) bool {
	if v.Kind != yaml.SequenceNode {
		d.diags.Add(d.at(v), "enum_options must be a list of values")
		return false
	}
	for _, o := range v.Content {
		if o.Kind == yaml.MappingNode {
			if val := mappingValue(o, "value"); val != nil {
				p.EnumOptions = append(p.EnumOptions, val.Value)
				continue
			}
		}
		if o.Kind != yaml.ScalarNode {
			d.diags.Add(d.at(o), "an enum option must be a value or a mapping with value")
			return false
		}
		p.EnumOptions = append(p.EnumOptions, o.Value)
	}
	return true
}

func (d *headerDecoder) checkDuplicates(h *Header) {
	seen := map[string]*ParamSpec{}
	for _, p := range h.Params {
		if first, ok := seen[p.Name]; ok {
			d.diags.Add(p.Pos, "parameter %q is declared twice (first at %s)", p.Name, first.Pos)
			continue
		}
		seen[p.Name] = p
	}
}

// check returns what is wrong with value for this parameter ("must be ..."), or "".
// hide keeps the value out of the message (it came from a secret reference).
func (p *ParamSpec) check(value string, hide bool) string {
	if p.Unsupported != "" && value != "" {
		return "is not supported by sluice: " + p.Unsupported
	}
	shown := fmt.Sprintf("%q", value)
	if p.Secret() || hide {
		shown = "the value given (not shown)"
	}
	if msg := checkType(p.Type, value); msg != "" {
		return fmt.Sprintf("must be %s, not %s", msg, shown)
	}
	if p.Type == TypeEnum && !contains(p.EnumOptions, value) {
		return fmt.Sprintf("must be one of %s, not %s%s", strings.Join(p.EnumOptions, ", "), shown, diag.DidYouMean(value, p.EnumOptions))
	}
	for _, re := range p.Regexes {
		if !re.MatchString(value) {
			return fmt.Sprintf("must match %s, not %s", re, shown)
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
