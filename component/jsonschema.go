package component

import (
	"reflect"
	"strconv"
	"time"
)

var (
	durationType = reflect.TypeFor[Duration]()
	exprType     = reflect.TypeFor[Expr]()
)

// JSONSchema describes a config struct type as JSON Schema, from the same tags that drive
// decoding, so editors and `sluice schema` can never disagree with validation. A key that the
// type's SetDefaults sets carries that value as its "default".
func JSONSchema(t reflect.Type) map[string]any {
	return schemaOf(t, defaultsOf(t))
}

// ConfigSchema is the JSON Schema of a registered component's config, described by the
// component's summary: what `sluice schema TYPE` prints.
func (s *Spec) ConfigSchema() map[string]any {
	out := JSONSchema(s.Config)
	out["type"] = []string{"object", "null"} // config: with nothing under it is an empty config
	out["title"] = s.Name + " config"
	out["description"] = s.Name + " (" + s.Kind.String() + "): " + s.Summary
	return out
}

// defaultsOf returns a value of struct type t (or of the struct a pointer type points to) as
// the decoder starts from: zero, then SetDefaults. It is the invalid Value for other types.
func defaultsOf(t reflect.Type) reflect.Value {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	v := reflect.New(t)
	if d, ok := v.Interface().(interface{ SetDefaults() }); ok {
		d.SetDefaults()
	}
	return v.Elem()
}

// schemaOf describes type t; def, when valid, is t's value after SetDefaults (for a struct,
// its fields' defaults).
func schemaOf(t reflect.Type, def reflect.Value) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": []string{"string", "number"}, "description": "a duration: 500ms, 10s, 5m, 2h, 1d, or a number of seconds"}
	case exprType:
		return map[string]any{"type": "string", "description": "an expression"}
	case nodeType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if def.IsValid() && !def.IsNil() {
			return schemaOf(t.Elem(), def.Elem())
		}
		return schemaOf(t.Elem(), reflect.Value{})
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		list := map[string]any{"type": "array", "items": schemaOf(t.Elem(), reflect.Value{})}
		if t.Elem().Kind() == reflect.String {
			// The decoder takes a single string for a list of strings (ReadFromKafka's
			// topic: t or [t1, t2]), so the schema does too.
			return map[string]any{"anyOf": []any{map[string]any{"type": "string"}, list}}
		}
		return list
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), reflect.Value{})}
	case reflect.Struct:
		return structSchema(t, def)
	}
	return map[string]any{}
}

// structSchema describes a config struct: its keys (and their aliases) with their
// descriptions, enums and defaults; unknown keys are refused, as the decoder refuses them.
func structSchema(t reflect.Type, def reflect.Value) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range fieldsOf(t) {
		var fv reflect.Value
		if def.IsValid() {
			fv = def.FieldByIndex(f.index)
		}
		s := schemaOf(t.FieldByIndex(f.index).Type, fv)
		if f.doc != "" {
			s["description"] = f.doc
		}
		if len(f.enum) > 0 {
			setEnum(s, f.enum)
		}
		if d, ok := defaultValue(fv); ok {
			s["default"] = d
		}
		props[f.name] = s
		for _, a := range f.aliases {
			props[a] = s
		}
		if f.required {
			required = append(required, f.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// setEnum limits s to the values of enum; for a string or a list of strings, the string and
// each item of the list.
func setEnum(s map[string]any, enum []string) {
	alts, ok := s["anyOf"].([]any)
	if !ok {
		s["enum"] = enum
		return
	}
	for _, a := range alts {
		if a := a.(map[string]any); a["type"] == "string" {
			a["enum"] = enum
		} else {
			a["items"].(map[string]any)["enum"] = enum
		}
	}
}

// defaultValue is v as JSON, for a scalar or a list or map of scalars that is not zero: a
// default SetDefaults gave. A struct's defaults are its keys'.
func defaultValue(v reflect.Value) (any, bool) {
	if !v.IsValid() || v.IsZero() {
		return nil, false
	}
	if v.Type() == durationType {
		return durationText(time.Duration(v.Int())), true
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Float64:
		return v.Float(), true
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			e, ok := defaultValue(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			e, ok := defaultValue(v.MapIndex(k))
			if !ok {
				return nil, false
			}
			out[k.String()] = e
		}
		return out, true
	}
	return nil, false
}

// durationText writes d as a user writes it in a pipeline file (10s, 1m, 2h, 1d, 500ms), in
// the largest unit that divides it.
func durationText(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}
