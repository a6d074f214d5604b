package avro

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	havro "github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/schemas"
)

// ParseSchema reads an Avro record schema (JSON text) into a Schema. Unions of null and one
// type are nullable; int and long are Int64; float and double Float64; string and enum String;
// bytes and fixed Bytes, or Decimal with the decimal logical type; timestamp-millis/micros
// (local ones too) are Timestamp, date is Date; arrays, maps and nested records are Array, Map
// and Struct. See docs/schemas.md for the rest. The root must be a record.
func ParseSchema(text string) (*schemas.Schema, error) {
	if trimmed := strings.TrimSpace(text); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		// hamba/avro reads text that is not JSON as a type name; say what is wrong instead.
		var se *json.SyntaxError
		if err := json.Unmarshal([]byte(text), new(json.RawMessage)); errors.As(err, &se) {
			return nil, fmt.Errorf("avro schema: invalid JSON at byte %d: %w", se.Offset, se)
		}
	}
	// A fresh cache, so named types of one pipeline's schema never leak into another's.
	s, err := havro.ParseWithCache(text, "", &havro.SchemaCache{})
	if err != nil {
		return nil, &avroParseError{err}
	}
	rec, ok := s.(*havro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("avro schema: the root must be a record, got %s", avroTypeName(s))
	}
	c := avroConverter{visiting: map[string]bool{rec.FullName(): true}}
	t, err := c.record(rec, "")
	if err != nil {
		return nil, err
	}
	return schemas.New(t.Fields...), nil
}

// avroParseError is an error of the Avro parser, without its "avro: " prefix.
type avroParseError struct{ err error }

func (e *avroParseError) Error() string {
	return "avro schema: " + strings.TrimPrefix(e.err.Error(), "avro: ")
}

func (e *avroParseError) Unwrap() error { return e.err }

// avroConverter turns Avro types into row types, refusing recursive ones (a row type is finite).
type avroConverter struct {
	visiting map[string]bool
}

func avroError(path, format string, args ...any) error {
	if path == "" {
		return fmt.Errorf("avro schema: "+format, args...)
	}
	return fmt.Errorf("avro field %q: "+format, append([]any{path}, args...)...)
}

func (c *avroConverter) record(rec *havro.RecordSchema, path string) (schemas.Type, error) {
	t := schemas.Type{Kind: schemas.Struct, Fields: make([]schemas.Field, 0, len(rec.Fields()))}
	for _, f := range rec.Fields() {
		ft, nullable, err := c.convert(f.Type(), join(path, f.Name()))
		if err != nil {
			return schemas.Type{}, err
		}
		t.Fields = append(t.Fields, schemas.Field{Name: f.Name(), Type: ft, Nullable: nullable})
	}
	return t, nil
}

// convert returns the row type of s and whether s admits null.
func (c *avroConverter) convert(s havro.Schema, path string) (schemas.Type, bool, error) {
	if ref, ok := s.(*havro.RefSchema); ok {
		s = ref.Schema()
	}
	switch x := s.(type) {
	case *havro.UnionSchema:
		return c.union(x, path)
	case *havro.NullSchema:
		return schemas.Type{}, false, avroError(path, "type \"null\" alone holds no values")
	case *havro.PrimitiveSchema:
		t, err := avroPrimitive(x, path)
		return t, false, err
	case *havro.EnumSchema:
		return schemas.Type{Kind: schemas.String}, false, nil
	case *havro.FixedSchema:
		if d, ok := x.Logical().(*havro.DecimalLogicalSchema); ok {
			return schemas.Type{Kind: schemas.Decimal, Precision: d.Precision(), Scale: d.Scale()}, false, nil
		}
		return schemas.Type{Kind: schemas.Bytes}, false, nil
	case *havro.ArraySchema:
		elem, _, err := c.convert(x.Items(), path+"[]")
		return schemas.Type{Kind: schemas.Array, Elem: &elem}, false, err
	case *havro.MapSchema:
		elem, _, err := c.convert(x.Values(), join(path, "*"))
		return schemas.Type{Kind: schemas.Map, Elem: &elem}, false, err
	case *havro.RecordSchema:
		name := x.FullName()
		if c.visiting[name] {
			return schemas.Type{}, false, avroError(path, "record %q contains itself, and recursive types are not supported", name)
		}
		c.visiting[name] = true
		defer delete(c.visiting, name)
		t, err := c.record(x, path)
		return t, false, err
	}
	return schemas.Type{}, false, avroError(path, "type %s is not supported", avroTypeName(s))
}

func (c *avroConverter) union(u *havro.UnionSchema, path string) (schemas.Type, bool, error) {
	var (
		other    havro.Schema
		nullable bool
	)
	for _, s := range u.Types() {
		if s.Type() == havro.Null {
			nullable = true
			continue
		}
		if other != nil {
			return schemas.Type{}, false, avroError(path, "union %s is not supported: only a type and \"null\" can be combined", u.String())
		}
		other = s
	}
	if other == nil {
		return schemas.Type{}, false, avroError(path, "a union of only \"null\" holds no values")
	}
	t, _, err := c.convert(other, path)
	return t, nullable, err
}

func avroPrimitive(p *havro.PrimitiveSchema, path string) (schemas.Type, error) {
	logical := havro.LogicalType("")
	if l := p.Logical(); l != nil {
		logical = l.Type()
	}
	switch p.Type() {
	case havro.Boolean:
		return schemas.Type{Kind: schemas.Bool}, nil
	case havro.Int:
		if logical == havro.Date {
			return schemas.Type{Kind: schemas.Date}, nil
		}
		return schemas.Type{Kind: schemas.Int64}, nil // time-millis stays a number of milliseconds
	case havro.Long:
		switch logical {
		case havro.TimestampMillis, havro.TimestampMicros, havro.LocalTimestampMillis, havro.LocalTimestampMicros:
			return schemas.Type{Kind: schemas.Timestamp}, nil
		}
		return schemas.Type{Kind: schemas.Int64}, nil // time-micros stays a number of microseconds
	case havro.Float, havro.Double:
		return schemas.Type{Kind: schemas.Float64}, nil
	case havro.String:
		return schemas.Type{Kind: schemas.String}, nil
	case havro.Bytes:
		if d, ok := p.Logical().(*havro.DecimalLogicalSchema); ok {
			return schemas.Type{Kind: schemas.Decimal, Precision: d.Precision(), Scale: d.Scale()}, nil
		}
		return schemas.Type{Kind: schemas.Bytes}, nil
	}
	return schemas.Type{}, avroError(path, "type %s is not supported", avroTypeName(p))
}

// avroTypeName names an Avro type for a message: "string", "array", "record \"x.Y\"".
func avroTypeName(s havro.Schema) string {
	if n, ok := s.(havro.NamedSchema); ok {
		return fmt.Sprintf("%s %q", s.Type(), n.FullName())
	}
	return strings.Trim(string(s.Type()), `"`)
}
