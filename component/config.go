package component

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

// Decoder decodes YAML nodes into typed config structs, reporting every problem with its
// position instead of stopping at the first. Struct fields are read through these tags:
//
//	yaml:"name"        the key (required; fields without it are not config)
//	required:"true"    the key must be present
//	enum:"A,B,C"       allowed values of a string, matched case-insensitively and stored as written here
//	alias:"other"      another accepted key for the same field
//	doc:"..."          documentation for `sluice schema` and the docs
//
// An embedded struct tagged yaml:",inline" adds its fields to the struct's own keys (a block
// of keys that several configs share, such as formats.Config).
//
// A config type may have a SetDefaults method, called before decoding.
type Decoder struct {
	File string
	// Lines are the file's lines, used to place errors inside block scalars.
	Lines []string
	Diags *diag.List
	// Warnings, when set, collects problems that do not stop the pipeline (ignored settings);
	// the runner logs them and `sluice validate` prints them.
	Warnings *diag.List

	// unknown collects unknown keys instead of reporting them, for DecodeTolerant.
	unknown *[]*yaml.Node
	// noun names the keys in messages: "config key" in a component's config, else "key".
	noun string
}

// At returns the position of n.
func (d *Decoder) At(n *yaml.Node) diag.Pos { return diag.At(d.File, n) }

// Errorf records a problem at pos and returns it so a hint can be added.
func (d *Decoder) Errorf(pos diag.Pos, format string, args ...any) *diag.Diagnostic {
	return d.Diags.Add(pos, format, args...)
}

func (c *Context) decodeConfig(ptr reflect.Value) {
	n := c.Config
	if n == nil {
		n = &yaml.Node{Kind: yaml.MappingNode, Line: c.Pos.Line, Column: c.Pos.Col}
	}
	c.Decoder.noun = "config key"
	defer func() { c.Decoder.noun = "" }()
	c.Decoder.Decode(n, ptr.Interface(), c.Describe())
}

// Decode decodes n into the struct that into points to; owner names the struct in messages
// (e.g. "MapToFields 'enrich'"). It reports whether there were no problems.
func (d *Decoder) Decode(n *yaml.Node, into any, owner string) bool {
	before := len(*d.Diags)
	d.value(n, reflect.ValueOf(into).Elem(), "", owner)
	return len(*d.Diags) == before
}

// DecodeTolerant is Decode for mappings whose unknown keys are not errors (Beam tolerates
// unknown runner options): it returns the key nodes it did not know instead of reporting them.
func (d *Decoder) DecodeTolerant(n *yaml.Node, into any, owner string) (unknown []*yaml.Node, ok bool) {
	d.unknown = &unknown
	defer func() { d.unknown = nil }()
	ok = d.Decode(n, into, owner)
	return unknown, ok
}

// Warnf records a problem that does not stop the pipeline, at pos.
func (d *Decoder) Warnf(pos diag.Pos, format string, args ...any) {
	if d.Warnings != nil {
		d.Warnings.Add(pos, format, args...)
	}
}

// nodeDecoder is implemented by config types that decode themselves (Expr, Duration).
type nodeDecoder interface {
	decodeNode(d *Decoder, n *yaml.Node) error
}

var nodeType = reflect.TypeFor[yaml.Node]()

func (d *Decoder) value(n *yaml.Node, v reflect.Value, key, owner string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			if err := nd.decodeNode(d, n); err != nil {
				d.Errorf(d.At(n), "%s%s", keyLabel(key), err.Error())
			}
			return
		}
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(*n))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return
		}
		p := reflect.New(v.Type().Elem())
		d.value(n, p.Elem(), key, owner)
		v.Set(p)
	case reflect.Struct:
		d.structValue(n, v, key, owner)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull(n) {
			d.typeError(n, key, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.typeError(n, key, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || err != nil || v.OverflowInt(i) {
			d.typeError(n, key, "an integer")
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || err != nil {
			d.typeError(n, key, "a number")
			return
		}
		v.SetFloat(f)
	case reflect.Slice:
		d.sliceValue(n, v, key, owner)
	case reflect.Map:
		d.mapValue(n, v, key, owner)
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.Errorf(d.At(n), "%s%v", keyPrefix(key), err)
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		panic(fmt.Sprintf("component: config field type %s is not supported", v.Type()))
	}
}

func (d *Decoder) sliceValue(n *yaml.Node, v reflect.Value, key, owner string) {
	items := n.Content
	if n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.String && !isNull(n) {
		items = []*yaml.Node{n} // a single string where a list of strings is expected
	} else if n.Kind != yaml.SequenceNode {
		d.typeError(n, key, "a list")
		return
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", key, i), owner)
	}
	v.Set(s)
}

func (d *Decoder) mapValue(n *yaml.Node, v reflect.Value, key, owner string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, key, "a mapping")
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		elem := reflect.New(v.Type().Elem()).Elem()
		if v.Type().Elem().Kind() == reflect.String && val.Kind == yaml.ScalarNode {
			elem.SetString(val.Value) // map[string]string takes any scalar as text
		} else {
			d.value(val, elem, k.Value, owner)
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

// field is one config field of a struct, read from its tags.
type field struct {
	index    []int // in the struct, through inline structs (reflect's FieldByIndex)
	name     string
	aliases  []string
	required bool
	enum     []string
	doc      string
}

func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if sf.Anonymous && name == "" && opts == "inline" && sf.Type.Kind() == reflect.Struct {
			for _, f := range fieldsOf(sf.Type) {
				f.index = append([]int{i}, f.index...)
				out = append(out, f)
			}
			continue
		}
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		f := field{index: []int{i}, name: name, required: sf.Tag.Get("required") == "true", doc: sf.Tag.Get("doc")}
		if a := sf.Tag.Get("alias"); a != "" {
			f.aliases = strings.Split(a, ",")
		}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		out = append(out, f)
	}
	return out
}

func (d *Decoder) structValue(n *yaml.Node, v reflect.Value, key, owner string) {
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			n = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
		} else {
			d.typeError(n, key, "a mapping")
			return
		}
	}
	fields := fieldsOf(v.Type())
	byKey := map[string]field{}
	var names []string
	for _, f := range fields {
		byKey[f.name] = f
		names = append(names, f.name)
		for _, a := range f.aliases {
			byKey[a] = f
		}
	}
	where := owner
	if key != "" {
		where = fmt.Sprintf("%q of %s", key, owner)
	}
	noun := d.noun
	if noun == "" {
		noun = "key"
	}
	seen := map[string]bool{}
	misspelt := map[string]bool{} // known keys an unknown one looks like: not also "missing"
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		f, ok := byKey[k.Value]
		if !ok && d.unknown != nil && key == "" {
			*d.unknown = append(*d.unknown, k)
			continue
		}
		if !ok {
			misspelt[diag.Suggest(k.Value, names)] = true
			d.Errorf(d.At(k), "unknown %s %q in %s%s", noun, k.Value, where, diag.DidYouMean(k.Value, names)).
				Detail = "known keys: " + strings.Join(sortedCopy(names), ", ")
			continue
		}
		if seen[f.name] {
			d.Errorf(d.At(k), "%s %q is given twice in %s", noun, k.Value, where)
			continue
		}
		seen[f.name] = true
		fv := v.FieldByIndex(f.index)
		d.value(val, fv, k.Value, owner)
		if len(f.enum) > 0 && fv.Kind() == reflect.String && val.Kind == yaml.ScalarNode {
			d.checkEnum(val, fv, k.Value, f.enum)
		}
	}
	for _, f := range fields {
		if f.required && !seen[f.name] && !misspelt[f.name] {
			d.Errorf(d.At(n), "%s needs %s %q", where, noun, f.name)
		}
	}
}

func (d *Decoder) checkEnum(n *yaml.Node, v reflect.Value, key string, enum []string) {
	for _, e := range enum {
		if strings.EqualFold(e, v.String()) {
			v.SetString(e)
			return
		}
	}
	d.Errorf(d.At(n), "%q must be one of %s, not %q%s", key, strings.Join(enum, ", "), v.String(),
		diag.DidYouMean(v.String(), enum))
}

func (d *Decoder) typeError(n *yaml.Node, key, want string) {
	d.Errorf(d.At(n), "%smust be %s, not %s", keyPrefix(key), want, describeNode(n))
}

// keyLabel introduces a self-contained message about key's value: `"size": ...`.
func keyLabel(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf("%q: ", key)
}

func keyPrefix(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf("%q ", key)
}

func describeNode(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "empty"
	}
	return strconv.Quote(n.Value)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// Duration is a config duration: "500ms", "10s", "5m", "2h", "1d", or a bare number of seconds.
type Duration time.Duration

func (du *Duration) decodeNode(_ *Decoder, n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("must be a duration such as 10s, not %s", describeNode(n))
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*du = Duration(v)
	return nil
}

// ParseDuration parses durations with the units ms, s, m, h and d (24 h); a bare number is
// seconds, as in Beam YAML.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a duration: write a number with a unit (ms, s, m, h, d), e.g. 10s or 1.5m", s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, bad
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || f < 0 {
				return 0, bad
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	return 0, bad
}

// Expr is an expression in the config, with where it stands in the file so that compile
// errors point inside it.
type Expr struct {
	Text string
	Pos  diag.Pos
	// Block is set for block scalars (| and >): Pos is then the first line of the text.
	Block bool
	// Node is the YAML node the expression was read from.
	Node *yaml.Node
}

func (e *Expr) decodeNode(d *Decoder, n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		// Beam's {expression: ..., output_type: ...} shape is handled by the components that
		// accept it; here an expression must be text.
		return fmt.Errorf("must be an expression, not a mapping")
	}
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return fmt.Errorf("must be an expression, not %s", describeNode(n))
	}
	*e = Expr{Text: n.Value, Pos: d.At(n), Node: n}
	switch n.Style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		e.Pos.Col++
	case yaml.LiteralStyle, yaml.FoldedStyle:
		e.Block = true
		e.Pos.Line++
		e.Pos.Col = 1
		if e.Pos.Line-1 < len(d.Lines) {
			line := d.Lines[e.Pos.Line-1]
			e.Pos.Col = len(line) - len(strings.TrimLeft(line, " ")) + 1
		}
	}
	return nil
}

// At returns the file position of a 1-based line and column inside the expression text.
func (e Expr) At(line, col int) diag.Pos {
	p := e.Pos
	if line <= 1 {
		p.Col += max(col, 1) - 1
		return p
	}
	p.Line += line - 1
	if !e.Block {
		p.Col = col
	} else {
		p.Col += col - 1
	}
	return p
}
