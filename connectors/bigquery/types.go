package bigquery

import (
	"errors"
	"fmt"
	"strings"

	bq "cloud.google.com/go/bigquery"
	"github.com/sluicehq/sluice/schemas"
)

// accepts lists, for each kind of value, the column types the value can be written into. The
// first is the type tableSchemaFor gives a new column (Beam's mapping), except for decimals,
// whose column type depends on their precision and scale. Besides those:
//   - an integer also goes into NUMERIC, BIGNUMERIC and, when it is exactly representable,
//     FLOAT64;
//   - a string also goes into JSON (it must be JSON text), GEOGRAPHY (WKT or GeoJSON, checked by
//     BigQuery), and DATETIME and TIME (as a BigQuery literal: "2024-05-01 12:30:00.250",
//     "12:30:00"), for which sluice has no type of its own. Strings do not go into DATE or
//     TIMESTAMP: convert them with MapToFields, where the format and time zone are explicit;
//   - a timestamp also goes into DATETIME (its UTC wall time), a date into DATETIME and
//     TIMESTAMP (midnight UTC);
//   - schemaless JSON (any) also goes into STRING, as JSON text.
//
// encode.go has a conversion for every pair listed here (a test checks).
var accepts = map[schemas.Kind][]bq.FieldType{
	schemas.Bool:      {bq.BooleanFieldType},
	schemas.Int64:     {bq.IntegerFieldType, bq.NumericFieldType, bq.BigNumericFieldType, bq.FloatFieldType},
	schemas.Float64:   {bq.FloatFieldType},
	schemas.String:    {bq.StringFieldType, bq.JSONFieldType, bq.GeographyFieldType, bq.DateTimeFieldType, bq.TimeFieldType},
	schemas.Bytes:     {bq.BytesFieldType},
	schemas.Timestamp: {bq.TimestampFieldType, bq.DateTimeFieldType},
	schemas.Date:      {bq.DateFieldType, bq.DateTimeFieldType, bq.TimestampFieldType},
	schemas.Decimal:   {bq.NumericFieldType, bq.BigNumericFieldType},
	schemas.Any:       {bq.JSONFieldType, bq.StringFieldType},
}

// The digits a NUMERIC and a BIGNUMERIC hold before and after the decimal point.
const (
	numericIntDigits, numericScale       = 29, 9
	bigNumericIntDigits, bigNumericScale = 38, 38
)

// Map columns are repeated records of these two fields, as Beam makes them.
const mapKeyField, mapValueField = "key", "value"

var (
	errNoType = errors.New("has no fixed type (schemaless JSON array or map); give the input a schema or convert the field with MapToFields")
	errNested = errors.New("BigQuery has no nested arrays (nor arrays of maps, which are repeated records); wrap the inner value in a struct with MapToFields")
)

// fieldPathError is a problem with one field, nested fields named as "a.b" and array elements
// as "a[3]".
type fieldPathError struct {
	path string
	err  error
}

func (e *fieldPathError) Error() string { return fmt.Sprintf("field %q %v", e.path, e.err) }
func (e *fieldPathError) Unwrap() error { return e.err }

// underField prefixes the path of err (a fieldPathError, or any error) with name.
func underField(err error, name string) error {
	var fe *fieldPathError
	if errors.As(err, &fe) {
		fe.path = joinPath(name, fe.path)
		return fe
	}
	return &fieldPathError{path: name, err: err}
}

func joinPath(parent, name string) string {
	switch {
	case parent == "":
		return name
	case strings.HasPrefix(name, "["):
		return parent + name
	}
	return parent + "." + name
}

// tableSchemaFor returns the schema of a new table for rows of in (create_disposition
// CREATE_IF_NEEDED), with Beam's mapping: bool BOOL, integer INT64, number FLOAT64, string
// STRING, bytes BYTES, timestamp TIMESTAMP, date DATE, decimal NUMERIC (BIGNUMERIC when its
// precision or scale does not fit NUMERIC), array a REPEATED column of its element type,
// struct RECORD, map a REPEATED RECORD of key (STRING) and value, any JSON. A nullable field
// is NULLABLE, any other REQUIRED. Every problem is reported, one per line.
func tableSchemaFor(in *schemas.Schema) (bq.Schema, error) {
	var errs []error
	s := fieldSchemas("", in.Fields, &errs)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("cannot make a BigQuery table for rows %s:\n%w", in, err)
	}
	return s, nil
}

func fieldSchemas(path string, fs []schemas.Field, errs *[]error) bq.Schema {
	out := make(bq.Schema, 0, len(fs))
	seen := make(map[string]string, len(fs))
	for _, f := range fs {
		p := joinPath(path, f.Name)
		if other, dup := seen[strings.ToLower(f.Name)]; dup {
			*errs = append(*errs, &fieldPathError{p, fmt.Errorf("has the same name as field %q: BigQuery column names are case-insensitive", other)})
			continue
		}
		seen[strings.ToLower(f.Name)] = f.Name
		if c := fieldSchemaFor(p, f, errs); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// fieldSchemaFor returns the column of f, or nil after adding its problems to errs.
func fieldSchemaFor(path string, f schemas.Field, errs *[]error) *bq.FieldSchema {
	c := &bq.FieldSchema{Name: f.Name, Required: !f.Nullable}
	t := f.Type
	switch t.Kind {
	case schemas.Array:
		if t.Elem == nil {
			*errs = append(*errs, &fieldPathError{path, errNoType})
			return nil
		}
		if t.Elem.Kind == schemas.Array || t.Elem.Kind == schemas.Map {
			*errs = append(*errs, &fieldPathError{path, fmt.Errorf("has type %s, but %w", t, errNested)})
			return nil
		}
		c.Repeated, c.Required = true, false
		t = *t.Elem
	case schemas.Map:
		if t.Elem == nil {
			*errs = append(*errs, &fieldPathError{path, errNoType})
			return nil
		}
		val := fieldSchemaFor(joinPath(path, mapValueField), schemas.Field{Name: mapValueField, Type: *t.Elem, Nullable: true}, errs)
		if val == nil {
			return nil
		}
		c.Type, c.Repeated, c.Required = bq.RecordFieldType, true, false
		c.Schema = bq.Schema{{Name: mapKeyField, Type: bq.StringFieldType, Required: true}, val}
		return c
	}
	switch t.Kind {
	case schemas.Struct:
		n := len(*errs)
		c.Type, c.Schema = bq.RecordFieldType, fieldSchemas(path, t.Fields, errs)
		if len(*errs) > n {
			return nil
		}
	case schemas.Decimal:
		ft, err := decimalColumnType(t)
		if err != nil {
			*errs = append(*errs, &fieldPathError{path, err})
			return nil
		}
		c.Type = ft
	default:
		ts := accepts[t.Kind]
		if len(ts) == 0 {
			*errs = append(*errs, &fieldPathError{path, fmt.Errorf("has type %s, which sluice cannot write to BigQuery", t)})
			return nil
		}
		c.Type = ts[0]
	}
	return c
}

// decimalColumnType returns NUMERIC for decimals it holds (at most 29 integer and 9 fraction
// digits; Beam maps every decimal to NUMERIC), else BIGNUMERIC (38 and 38). A decimal without
// a precision is a NUMERIC, as in Beam.
func decimalColumnType(t schemas.Type) (bq.FieldType, error) {
	p, s := t.Precision, t.Scale
	if p == 0 {
		p = s + numericIntDigits
	}
	switch {
	case s < 0 || s > p:
		return "", fmt.Errorf("has type %s, which is not a valid decimal type", t)
	case s <= numericScale && p-s <= numericIntDigits:
		return bq.NumericFieldType, nil
	case s <= bigNumericScale && p-s <= bigNumericIntDigits:
		return bq.BigNumericFieldType, nil
	}
	return "", fmt.Errorf("has type %s, which does not fit BigQuery: NUMERIC holds %d digits before and %d after the point, BIGNUMERIC %d and %d",
		t, numericIntDigits, numericScale, bigNumericIntDigits, bigNumericScale)
}

// canonicalType returns the name the Go client uses for a column type, also for the standard
// SQL aliases the API may return (INT64, FLOAT64, BOOL, STRUCT, DECIMAL, BIGDECIMAL).
func canonicalType(ft bq.FieldType) bq.FieldType {
	switch u := bq.FieldType(strings.ToUpper(string(ft))); u {
	case "INT64":
		return bq.IntegerFieldType
	case "FLOAT64":
		return bq.FloatFieldType
	case "BOOL":
		return bq.BooleanFieldType
	case "STRUCT":
		return bq.RecordFieldType
	case "DECIMAL":
		return bq.NumericFieldType
	case "BIGDECIMAL":
		return bq.BigNumericFieldType
	default:
		return u
	}
}

// sqlTypeName returns a column's type as standard SQL spells it, e.g. ARRAY<INT64> or
// NUMERIC(10, 2).
func sqlTypeName(c *bq.FieldSchema) string {
	var s string
	switch ft := canonicalType(c.Type); ft {
	case bq.IntegerFieldType:
		s = "INT64"
	case bq.FloatFieldType:
		s = "FLOAT64"
	case bq.BooleanFieldType:
		s = "BOOL"
	case bq.RecordFieldType:
		s = "STRUCT"
	case bq.NumericFieldType, bq.BigNumericFieldType:
		s = string(ft)
		if c.Precision > 0 {
			s += fmt.Sprintf("(%d, %d)", c.Precision, c.Scale)
		}
	default:
		s = string(ft)
	}
	if c.Repeated {
		return "ARRAY<" + s + ">"
	}
	return s
}

// findColumn returns the index of the column named name, compared as BigQuery does
// (case-insensitively), or -1.
func findColumn(cols bq.Schema, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// checkCompatible reports why rows of in cannot be written into a table of schema table, all
// problems at once, one per line: a field the table lacks (names compare case-insensitively),
// a type that does not go into its column (see accepts), an array into a column that is not
// REPEATED or the reverse, or a REQUIRED column the rows do not have. Columns the rows do not
// have are fine when NULLABLE or REPEATED. A nullable field may go into a REQUIRED column: a
// row that holds null there is a bad record (Encode's error), not the pipeline's.
func checkCompatible(table bq.Schema, in *schemas.Schema) error {
	var errs []error
	compatibleFields("", table, in.Fields, &errs)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rows %s cannot be written to the table:\n%w", in, err)
	}
	return nil
}

func compatibleFields(path string, cols bq.Schema, fs []schemas.Field, errs *[]error) {
	matched := make([]string, len(cols))
	for _, f := range fs {
		p := joinPath(path, f.Name)
		i := findColumn(cols, f.Name)
		if i < 0 {
			*errs = append(*errs, &fieldPathError{p, errors.New("is not in the table: add the column to the table, or leave the field out with MapToFields")})
			continue
		}
		if matched[i] != "" {
			*errs = append(*errs, &fieldPathError{p, fmt.Errorf("and field %q both go into column %q: BigQuery column names are case-insensitive", matched[i], cols[i].Name)})
			continue
		}
		matched[i] = f.Name
		compatibleField(p, f.Type, cols[i], errs)
	}
	for i, c := range cols {
		if matched[i] == "" && c.Required && !c.Repeated {
			*errs = append(*errs, &fieldPathError{joinPath(path, c.Name), fmt.Errorf("is a REQUIRED %s column in the table, but the rows do not have it", sqlTypeName(c))})
		}
	}
}

// compatibleField adds to errs why values of t cannot go into column c.
func compatibleField(path string, t schemas.Type, c *bq.FieldSchema, errs *[]error) {
	mismatch := func(hint string) {
		*errs = append(*errs, &fieldPathError{path, fmt.Errorf("has type %s in the table, which rows of type %s cannot be written to%s", sqlTypeName(c), t, hint)})
	}
	ft := canonicalType(c.Type)
	switch t.Kind {
	case schemas.Array:
		if t.Elem == nil {
			*errs = append(*errs, &fieldPathError{path, errNoType})
			return
		}
		if t.Elem.Kind == schemas.Array || t.Elem.Kind == schemas.Map {
			*errs = append(*errs, &fieldPathError{path, fmt.Errorf("has type %s, but %w", t, errNested)})
			return
		}
		if !c.Repeated {
			mismatch(" (an array goes into a REPEATED column)")
			return
		}
		compatibleValue(path, *t.Elem, c, mismatch, errs)
	case schemas.Map:
		if t.Elem == nil {
			*errs = append(*errs, &fieldPathError{path, errNoType})
			return
		}
		if !c.Repeated || ft != bq.RecordFieldType {
			mismatch(" (a map goes into a REPEATED RECORD of key and value)")
			return
		}
		k, v := findColumn(c.Schema, mapKeyField), findColumn(c.Schema, mapValueField)
		if k < 0 || v < 0 {
			mismatch(" (a map goes into a REPEATED RECORD of key and value)")
			return
		}
		compatibleField(joinPath(path, c.Schema[k].Name), schemas.Type{Kind: schemas.String}, c.Schema[k], errs)
		compatibleField(joinPath(path, c.Schema[v].Name), *t.Elem, c.Schema[v], errs)
		for i, sc := range c.Schema {
			if i != k && i != v && sc.Required && !sc.Repeated {
				*errs = append(*errs, &fieldPathError{joinPath(path, sc.Name), fmt.Errorf("is a REQUIRED %s column in the table, but map entries have only a key and a value", sqlTypeName(sc))})
			}
		}
	default:
		if c.Repeated {
			mismatch(" (a REPEATED column takes arrays)")
			return
		}
		compatibleValue(path, t, c, mismatch, errs)
	}
}

// compatibleValue checks one value of t (not an array or a map) against c's element type.
func compatibleValue(path string, t schemas.Type, c *bq.FieldSchema, mismatch func(string), errs *[]error) {
	ft := canonicalType(c.Type)
	if t.Kind == schemas.Struct {
		if ft != bq.RecordFieldType {
			mismatch("")
			return
		}
		compatibleFields(path, c.Schema, t.Fields, errs)
		return
	}
	ok := false
	for _, a := range accepts[t.Kind] {
		ok = ok || a == ft
	}
	if !ok {
		names := make([]string, len(accepts[t.Kind]))
		for i, a := range accepts[t.Kind] {
			names[i] = sqlTypeName(&bq.FieldSchema{Type: a})
		}
		mismatch(fmt.Sprintf(" (%s goes into %s)", t.Kind, strings.Join(names, ", ")))
	}
}

// canonicalColumn returns a copy of c with canonical type names, nested columns included.
func canonicalColumn(c *bq.FieldSchema) *bq.FieldSchema {
	cc := *c
	cc.Type = canonicalType(c.Type)
	cc.Schema = make(bq.Schema, len(c.Schema))
	for i, s := range c.Schema {
		cc.Schema[i] = canonicalColumn(s)
	}
	return &cc
}

// fieldIndex returns the index of the field that goes into the column named name, or -1.
func fieldIndex(fs []schemas.Field, name string) int {
	for i, f := range fs {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func mismatch(v any, want string) error {
	return fmt.Errorf("holds %s, which is not %s", describe(v), want)
}

// describe is schemas.Literal: the value as a message quotes it after the column's type
// ("holds \"x\", which is not an integer"). encode.go calls it by this name.
var describe = schemas.Literal
