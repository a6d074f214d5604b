package formats

import (
	"encoding/json"

	"github.com/sluicehq/sluice/schemas"
)

// jsonSchemaFor returns the JSON Schema of rows with the given fields, as the JSON encoder
// writes them and ParseJSONSchema reads them back (properties in the fields' order): nullable
// fields are not required and may be null.
func jsonSchemaFor(fields []schemas.Field) jsonObject {
	props := make(jsonObject, 0, len(fields))
	required := []string{}
	for _, f := range fields {
		t := jsonTypeFor(f.Type)
		if f.Nullable && len(t) > 0 && t[0].key == "type" {
			t[0].value = []any{t[0].value, "null"}
		}
		if !f.Nullable {
			required = append(required, f.Name)
		}
		props = append(props, jsonMember{f.Name, t})
	}
	return jsonObject{{"type", "object"}, {"properties", props}, {"required", required}}
}

func jsonTypeFor(t schemas.Type) jsonObject {
	switch t.Kind {
	case schemas.Bool:
		return jsonObject{{"type", "boolean"}}
	case schemas.Int64:
		return jsonObject{{"type", "integer"}}
	case schemas.Float64, schemas.Decimal:
		return jsonObject{{"type", "number"}}
	case schemas.String:
		return jsonObject{{"type", "string"}}
	case schemas.Bytes:
		return jsonObject{{"type", "string"}, {"contentEncoding", "base64"}}
	case schemas.Timestamp:
		return jsonObject{{"type", "string"}, {"format", "date-time"}}
	case schemas.Date:
		return jsonObject{{"type", "string"}, {"format", "date"}}
	case schemas.Array:
		out := jsonObject{{"type", "array"}}
		if t.Elem != nil && t.Elem.Kind != schemas.Any {
			out = append(out, jsonMember{"items", jsonTypeFor(*t.Elem)})
		}
		return out
	case schemas.Map:
		out := jsonObject{{"type", "object"}}
		if t.Elem != nil && t.Elem.Kind != schemas.Any {
			out = append(out, jsonMember{"additionalProperties", jsonTypeFor(*t.Elem)})
		}
		return out
	case schemas.Struct:
		return jsonSchemaFor(t.Fields)
	}
	return jsonObject{}
}

// jsonObject is a JSON object that keeps its members' order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			out = append(out, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}'), nil
}
