package component

import (
	"reflect"
)

var (
	durationType = reflect.TypeFor[Duration]()
	exprType     = reflect.TypeFor[Expr]()
)

// JSONSchema describes a config struct type as JSON Schema, from the same tags that drive
// decoding, so editors and `sluice schema` can never disagree with validation.
func JSONSchema(t reflect.Type) map[string]any {
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
		return JSONSchema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		list := map[string]any{"type": "array", "items": JSONSchema(t.Elem())}
		if t.Elem().Kind() == reflect.String {
			// The decoder takes a single string for a list of strings (ReadFromKafka's
			// topic: t or [t1, t2]), so the schema does too.
			return map[string]any{"anyOf": []any{map[string]any{"type": "string"}, list}}
		}
		return list
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": JSONSchema(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for _, f := range fieldsOf(t) {
			s := JSONSchema(t.FieldByIndex(f.index).Type)
			if f.doc != "" {
				s["description"] = f.doc
			}
			if len(f.enum) > 0 {
				s["enum"] = f.enum
				if alts, ok := s["anyOf"].([]any); ok { // a string or a list of them: each from the enum
					for _, a := range alts {
						if a := a.(map[string]any); a["type"] == "string" {
							a["enum"] = f.enum
						} else {
							a["items"].(map[string]any)["enum"] = f.enum
						}
					}
					delete(s, "enum")
				}
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
	return map[string]any{}
}
