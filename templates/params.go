package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/secret"
	"gopkg.in/yaml.v3"
)

// Param is a parameter value given on the command line.
type Param struct {
	Name, Value string
	// From says where it was given, for messages: "-p", "--parameters", "params file F".
	From string
}

// ParseAssignment parses NAME=VALUE.
func ParseAssignment(s, from string) (Param, error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Param{}, fmt.Errorf("%s %q: want NAME=VALUE", from, s)
	}
	return Param{Name: name, Value: value, From: from}, nil
}

// ParseGcloud parses gcloud's dictionary syntax: K=V,K2=V2, or with a custom delimiter
// ^D^K=V1DK2=V2 (e.g. ^@^a=1@b=x,y when values hold commas), as `--parameters` takes it.
func ParseGcloud(s string) ([]Param, error) {
	const from = "--parameters"
	delim := ","
	if strings.HasPrefix(s, "^") {
		end := strings.Index(s[1:], "^")
		if end < 1 {
			return nil, fmt.Errorf("%s: a custom delimiter is written ^DELIM^ before the first parameter, e.g. ^@^a=1@b=x,y", from)
		}
		delim, s = s[1:end+1], s[end+2:]
	}
	var out []Param
	for _, item := range strings.Split(s, delim) {
		if item == "" {
			continue
		}
		p, err := ParseAssignment(item, from)
		if err != nil {
			if len(out) > 0 && delim == "," {
				return nil, fmt.Errorf("%w (a value with commas needs a custom delimiter, e.g. --parameters '^@^%s=...@...')", err, out[len(out)-1].Name)
			}
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// CommandLineSecrets returns the values among params given on the command line (-p,
// --parameters) to password parameters of h without a ${env:NAME} or ${file:PATH} reference:
// other users of the machine can read a command line. The last value of a name counts.
func CommandLineSecrets(h *Header, params []Param) []Param {
	if h == nil {
		return nil
	}
	last := map[string]Param{}
	var order []string
	for _, p := range params {
		if _, ok := last[p.Name]; !ok {
			order = append(order, p.Name)
		}
		last[p.Name] = p
	}
	var out []Param
	for _, name := range order {
		p := last[name]
		if (p.From != "-p" && p.From != "--parameters") || p.Value == "" || secret.HasRef(p.Value) {
			continue
		}
		for _, s := range h.Params {
			if s.Name == name && s.Secret() {
				out = append(out, p)
			}
		}
	}
	return out
}

// ReadParamsFile reads parameters from a JSON or YAML file of NAME: VALUE. Scalars are taken
// as written; mappings and lists become JSON text, as a map parameter's value is.
func ReadParamsFile(path string) ([]Param, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--params-file: %w", err)
	}
	from := "params file " + path
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON or YAML: %s", from, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return ParamsFromNode(path, doc.Content[0], from)
}

// ParamsFromNode reads parameters from a YAML mapping NAME: VALUE of the file at path. Scalars
// are taken as written; mappings and lists become JSON text, as a map parameter's value is.
// from says where they were given, for messages.
func ParamsFromNode(path string, m *yaml.Node, from string) ([]Param, error) {
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: want a mapping of parameter names to values", path, m.Line, m.Column)
	}
	var out []Param
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		value := v.Value
		if v.Kind != yaml.ScalarNode {
			var x any
			if err := v.Decode(&x); err != nil {
				return nil, fmt.Errorf("%s:%d:%d: %s: %w", path, v.Line, v.Column, k.Value, err)
			}
			b, err := json.Marshal(jsonable(x))
			if err != nil {
				return nil, fmt.Errorf("%s:%d:%d: %s: %w", path, v.Line, v.Column, k.Value, err)
			}
			value = string(b)
		} else if v.Tag == "!!null" {
			value = ""
		}
		out = append(out, Param{Name: k.Value, Value: value, From: from})
	}
	return out, nil
}

// jsonable turns YAML's map[string]any decoding into values encoding/json accepts.
func jsonable(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonable(e)
		}
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonable(e)
		}
	}
	return x
}

// ParseJinjaVariables parses Beam's --jinja_variables: a JSON object of variables.
func ParseJinjaVariables(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("--jinja_variables: invalid JSON at byte %d: %w", se.Offset, err)
		}
		return nil, fmt.Errorf("--jinja_variables: want a JSON object of variables: %w", err)
	}
	return numbers(m).(map[string]any), nil
}

// numbers turns JSON numbers into int64 when they are integers (so {{ n }} renders 3, not 3.0)
// and float64 otherwise.
func numbers(x any) any {
	switch v := x.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return x
}

// checkType returns what a value of type typ must be when value is not one, or "".
func checkType(typ, value string) string {
	switch typ {
	case TypeInteger:
		if _, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil {
			return "an integer"
		}
	case TypeDouble:
		if _, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
			return "a number"
		}
	case TypeBoolean:
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "true", "false":
		default:
			return "true or false"
		}
	case TypeMap:
		var m map[string]any
		if json.Unmarshal([]byte(value), &m) != nil {
			return `a JSON object, e.g. {"key": "value"}`
		}
	}
	return ""
}
