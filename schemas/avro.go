package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"
)

// ParseAvroSchema reads an Avro record schema (JSON text) into a Schema. Unions of null and one
// type are nullable; int and long are Int64; float and double Float64; string and enum String;
// bytes and fixed Bytes, or Decimal with the decimal logical type; timestamp-millis/micros
// (local ones too) are Timestamp, date is Date; arrays, maps and nested records are Array, Map
// and Struct. See docs/schemas.md for the rest. The root must be a record.
func ParseAvroSchema(text string) (*Schema, error) {
	if trimmed := strings.TrimSpace(text); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		// hamba/avro reads text that is not JSON as a type name; say what is wrong instead.
		var se *json.SyntaxError
		if err := json.Unmarshal([]byte(text), new(json.RawMessage)); errors.As(err, &se) {
			return nil, fmt.Errorf("avro schema: invalid JSON at byte %d: %w", se.Offset, se)
		}
	}
	// A fresh cache, so named types of one pipeline's schema never leak into another's.
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, &avroParseError{err}
	}
	rec, ok := s.(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("avro schema: the root must be a record, got %s", avroTypeName(s))
	}
	c := avroConverter{visiting: map[string]bool{rec.FullName(): true}}
	t, err := c.record(rec, "")
	if err != nil {
		return nil, err
	}
	return New(t.Fields...), nil
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

func (c *avroConverter) record(rec *avro.RecordSchema, path string) (Type, error) {
	t := Type{Kind: Struct, Fields: make([]Field, 0, len(rec.Fields()))}
	for _, f := range rec.Fields() {
		ft, nullable, err := c.convert(f.Type(), join(path, f.Name()))
		if err != nil {
			return Type{}, err
		}
		t.Fields = append(t.Fields, Field{Name: f.Name(), Type: ft, Nullable: nullable})
	}
	return t, nil
}

// convert returns the row type of s and whether s admits null.
func (c *avroConverter) convert(s avro.Schema, path string) (Type, bool, error) {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	switch x := s.(type) {
	case *avro.UnionSchema:
		return c.union(x, path)
	case *avro.NullSchema:
		return Type{}, false, avroError(path, "type \"null\" alone holds no values")
	case *avro.PrimitiveSchema:
		t, err := avroPrimitive(x, path)
		return t, false, err
	case *avro.EnumSchema:
		return Type{Kind: String}, false, nil
	case *avro.FixedSchema:
		if d, ok := x.Logical().(*avro.DecimalLogicalSchema); ok {
			return Type{Kind: Decimal, Precision: d.Precision(), Scale: d.Scale()}, false, nil
		}
		return Type{Kind: Bytes}, false, nil
	case *avro.ArraySchema:
		elem, _, err := c.convert(x.Items(), path+"[]")
		return Type{Kind: Array, Elem: &elem}, false, err
	case *avro.MapSchema:
		elem, _, err := c.convert(x.Values(), join(path, "*"))
		return Type{Kind: Map, Elem: &elem}, false, err
	case *avro.RecordSchema:
		name := x.FullName()
		if c.visiting[name] {
			return Type{}, false, avroError(path, "record %q contains itself, and recursive types are not supported", name)
		}
		c.visiting[name] = true
		defer delete(c.visiting, name)
		t, err := c.record(x, path)
		return t, false, err
	}
	return Type{}, false, avroError(path, "type %s is not supported", avroTypeName(s))
}

func (c *avroConverter) union(u *avro.UnionSchema, path string) (Type, bool, error) {
	var (
		other    avro.Schema
		nullable bool
	)
	for _, s := range u.Types() {
		if s.Type() == avro.Null {
			nullable = true
			continue
		}
		if other != nil {
			return Type{}, false, avroError(path, "union %s is not supported: only a type and \"null\" can be combined", u.String())
		}
		other = s
	}
	if other == nil {
		return Type{}, false, avroError(path, "a union of only \"null\" holds no values")
	}
	t, _, err := c.convert(other, path)
	return t, nullable, err
}

func avroPrimitive(p *avro.PrimitiveSchema, path string) (Type, error) {
	logical := avro.LogicalType("")
	if l := p.Logical(); l != nil {
		logical = l.Type()
	}
	switch p.Type() {
	case avro.Boolean:
		return Type{Kind: Bool}, nil
	case avro.Int:
		if logical == avro.Date {
			return Type{Kind: Date}, nil
		}
		return Type{Kind: Int64}, nil // time-millis stays a number of milliseconds
	case avro.Long:
		switch logical {
		case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return Type{Kind: Timestamp}, nil
		}
		return Type{Kind: Int64}, nil // time-micros stays a number of microseconds
	case avro.Float, avro.Double:
		return Type{Kind: Float64}, nil
	case avro.String:
		return Type{Kind: String}, nil
	case avro.Bytes:
		if d, ok := p.Logical().(*avro.DecimalLogicalSchema); ok {
			return Type{Kind: Decimal, Precision: d.Precision(), Scale: d.Scale()}, nil
		}
		return Type{Kind: Bytes}, nil
	}
	return Type{}, avroError(path, "type %s is not supported", avroTypeName(p))
}

// avroTypeName names an Avro type for a message: "string", "array", "record \"x.Y\"".
func avroTypeName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return fmt.Sprintf("%s %q", s.Type(), n.FullName())
	}
	return strings.Trim(string(s.Type()), `"`)
}
