package iceberg

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/sluicehq/sluice/schemas"
)

// maxDecimalPrecision is the largest precision an Iceberg decimal has.
const maxDecimalPrecision = 38

// tableSchema returns the Iceberg schema of a new table for rows of s: Beam's mapping, with
// timestamps as timestamptz and decimals kept (docs/iceberg.md). Field IDs are numbered from 1;
// the catalog assigns its own when it creates the table.
func tableSchema(s *schemas.Schema) (*iceberg.Schema, error) {
	ids := 0
	next := func() int { ids++; return ids }
	fields, err := nestedFields(s.Fields, next)
	if err != nil {
		return nil, err
	}
	return iceberg.NewSchema(0, fields...), nil
}

func nestedFields(fs []schemas.Field, next func() int) ([]iceberg.NestedField, error) {
	out := make([]iceberg.NestedField, len(fs))
	for i, f := range fs {
		out[i] = iceberg.NestedField{ID: next(), Name: f.Name, Required: !f.Nullable}
	}
	for i, f := range fs { // nested IDs after the siblings', as Iceberg numbers them
		t, err := icebergType(f.Type, next)
		if err != nil {
			return nil, inColumn(err, f.Name)
		}
		out[i].Type = t
	}
	return out, nil
}

// errNoType is the reason a schemaless field cannot become a column.
var errNoType = errors.New("has no fixed type (schemaless JSON); give the input a schema or convert the field with MapToFields")

func icebergType(t schemas.Type, next func() int) (iceberg.Type, error) {
	switch t.Kind {
	case schemas.Bool:
		return iceberg.PrimitiveTypes.Bool, nil
	case schemas.Int64:
		return iceberg.PrimitiveTypes.Int64, nil
	case schemas.Float64:
		return iceberg.PrimitiveTypes.Float64, nil
	case schemas.String:
		return iceberg.PrimitiveTypes.String, nil
	case schemas.Bytes:
		return iceberg.PrimitiveTypes.Binary, nil
	case schemas.Timestamp:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case schemas.Date:
		return iceberg.PrimitiveTypes.Date, nil
	case schemas.Decimal:
		p := t.Precision
		if p == 0 {
			p = maxDecimalPrecision
		}
		if p > maxDecimalPrecision || t.Scale > p || t.Scale < 0 {
			return nil, fmt.Errorf("%s does not fit an Iceberg decimal (precision at most %d)", t, maxDecimalPrecision)
		}
		return iceberg.DecimalTypeOf(p, t.Scale), nil
	case schemas.Array:
		if t.Elem == nil {
			return nil, errNoType
		}
		id := next()
		elem, err := icebergType(*t.Elem, next)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: false}, nil
	case schemas.Map:
		if t.Elem == nil {
			return nil, errNoType
		}
		kid, vid := next(), next()
		val, err := icebergType(*t.Elem, next)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: kid, KeyType: iceberg.PrimitiveTypes.String, ValueID: vid, ValueType: val, ValueRequired: false}, nil
	case schemas.Struct:
		fs, err := nestedFields(t.Fields, next)
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fs}, nil
	}
	return nil, errNoType
}

// checkCompatible reports why rows of s cannot be written into a table of schema ts: a field
// the table lacks, a type that does not convert, a nullable field in a required column, or
// a required column the rows do not have.
func checkCompatible(s *schemas.Schema, ts *iceberg.Schema) error {
	return compatibleFields(s.Fields, ts.Fields())
}

func compatibleFields(fs []schemas.Field, cols []iceberg.NestedField) error {
	byName := make(map[string]iceberg.NestedField, len(cols))
	for _, c := range cols {
		byName[c.Name] = c
	}
	seen := map[string]bool{}
	var errs []error
	for _, f := range fs {
		c, ok := byName[f.Name]
		if !ok {
			errs = append(errs, inColumn(errors.New("is not in the table: add it to the table, or leave it out with drop"), f.Name))
			continue
		}
		seen[f.Name] = true
		if f.Nullable && c.Required {
			errs = append(errs, inColumn(errors.New("is required in the table, but the rows may hold null there"), f.Name))
		}
		if err := compatibleType(f.Type, c.Type); err != nil {
			errs = append(errs, inColumn(err, f.Name))
		}
	}
	for _, c := range cols {
		if c.Required && !seen[c.Name] {
			errs = append(errs, inColumn(errors.New("is required in the table, but the rows do not have it"), c.Name))
		}
	}
	return errors.Join(errs...)
}

// compatibleType reports whether values of t can be written into a column of type ct. Besides
// the types tableSchema makes, narrower columns (int, float, timestamp without zone, another
// decimal scale) take values that fit them; the writer checks each value.
func compatibleType(t schemas.Type, ct iceberg.Type) error {
	ok := false
	switch t.Kind {
	case schemas.Bool:
		ok = ct.Equals(iceberg.PrimitiveTypes.Bool)
	case schemas.Int64:
		ok = ct.Equals(iceberg.PrimitiveTypes.Int64) || ct.Equals(iceberg.PrimitiveTypes.Int32)
	case schemas.Float64:
		ok = ct.Equals(iceberg.PrimitiveTypes.Float64) || ct.Equals(iceberg.PrimitiveTypes.Float32)
	case schemas.String:
		ok = ct.Equals(iceberg.PrimitiveTypes.String)
	case schemas.Bytes:
		ok = ct.Equals(iceberg.PrimitiveTypes.Binary)
	case schemas.Timestamp:
		ok = ct.Equals(iceberg.PrimitiveTypes.TimestampTz) || ct.Equals(iceberg.PrimitiveTypes.Timestamp)
	case schemas.Date:
		ok = ct.Equals(iceberg.PrimitiveTypes.Date)
	case schemas.Decimal:
		_, ok = ct.(iceberg.DecimalType)
	case schemas.Array:
		if lt, isList := ct.(*iceberg.ListType); isList && t.Elem != nil {
			if err := compatibleType(*t.Elem, lt.Element); err != nil {
				return inColumn(err, "element")
			}
			ok = true
		}
	case schemas.Map:
		if mt, isMap := ct.(*iceberg.MapType); isMap && t.Elem != nil && mt.KeyType.Equals(iceberg.PrimitiveTypes.String) {
			if err := compatibleType(*t.Elem, mt.ValueType); err != nil {
				return inColumn(err, "value")
			}
			ok = true
		}
	case schemas.Struct:
		if st, isStruct := ct.(*iceberg.StructType); isStruct {
			return compatibleFields(t.Fields, st.FieldList)
		}
	}
	if !ok {
		return fmt.Errorf("has type %s in the table, which rows of type %s cannot be written to", ct, t)
	}
	return nil
}
