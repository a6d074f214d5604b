package arrowrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/sluicehq/sluice/schemas"
)

// maxDecimalPrecision is the largest precision of Arrow's Decimal128, the type of a decimal
// whose precision the row schema does not say.
const maxDecimalPrecision = 38

// ArrowSchema returns the Arrow schema of rows of s: integers are int64, numbers float64,
// timestamps microseconds in UTC, dates date32, decimals decimal128, arrays lists, structs
// structs and maps maps with string keys. A field of kind Any (schemaless JSON) has no Arrow
// type: the error names it.
func ArrowSchema(s *schemas.Schema) (*arrow.Schema, error) {
	fields, err := arrowFields(s.Fields)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}

func arrowFields(fs []schemas.Field) ([]arrow.Field, error) {
	out := make([]arrow.Field, len(fs))
	for i, f := range fs {
		dt, err := arrowType(f.Type)
		if err != nil {
			return nil, InColumn(err, f.Name)
		}
		out[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
	}
	return out, nil
}

func arrowType(t schemas.Type) (arrow.DataType, error) {
	switch t.Kind {
	case schemas.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case schemas.Int64:
		return arrow.PrimitiveTypes.Int64, nil
	case schemas.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	case schemas.String:
		return arrow.BinaryTypes.String, nil
	case schemas.Bytes:
		return arrow.BinaryTypes.Binary, nil
	case schemas.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case schemas.Date:
		return arrow.FixedWidthTypes.Date32, nil
	case schemas.Decimal:
		p := t.Precision
		if p == 0 {
			p = maxDecimalPrecision
		}
		if p > maxDecimalPrecision || t.Scale > p {
			return nil, fmt.Errorf("is %s, more digits than Arrow's decimal128 holds", t)
		}
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(t.Scale)}, nil
	case schemas.Array:
		if t.Elem == nil {
			break
		}
		elem, err := arrowType(*t.Elem)
		if err != nil {
			return nil, InColumn(err, "element")
		}
		return arrow.ListOf(elem), nil
	case schemas.Map:
		if t.Elem == nil {
			break
		}
		val, err := arrowType(*t.Elem)
		if err != nil {
			return nil, InColumn(err, "value")
		}
		return arrow.MapOf(arrow.BinaryTypes.String, val), nil
	case schemas.Struct:
		fields, err := arrowFields(t.Fields)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	}
	return nil, fmt.Errorf("is %s, which has no Arrow type (give it a type, e.g. with MapToFields' output_type)", t)
}

// SchemaOf returns the row schema of Arrow records of sc: the types GetterFor reads, with
// 32-bit integers and floats widened.
func SchemaOf(sc *arrow.Schema) (*schemas.Schema, error) {
	fields, err := rowFields(sc.Fields())
	if err != nil {
		return nil, err
	}
	return schemas.New(fields...), nil
}

func rowFields(fs []arrow.Field) ([]schemas.Field, error) {
	out := make([]schemas.Field, len(fs))
	for i, f := range fs {
		t, err := rowType(f.Type)
		if err != nil {
			return nil, InColumn(err, f.Name)
		}
		out[i] = schemas.Field{Name: f.Name, Type: t, Nullable: f.Nullable}
	}
	return out, nil
}

func rowType(dt arrow.DataType) (schemas.Type, error) {
	kind := func(k schemas.Kind) (schemas.Type, error) { return schemas.Type{Kind: k}, nil }
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return kind(schemas.Bool)
	case *arrow.Int32Type, *arrow.Int64Type:
		return kind(schemas.Int64)
	case *arrow.Float32Type, *arrow.Float64Type:
		return kind(schemas.Float64)
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return kind(schemas.String)
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return kind(schemas.Bytes)
	case *arrow.TimestampType:
		return kind(schemas.Timestamp)
	case *arrow.Date32Type:
		return kind(schemas.Date)
	case *arrow.Decimal128Type:
		return schemas.Type{Kind: schemas.Decimal, Precision: int(t.Precision), Scale: int(t.Scale)}, nil
	case *arrow.MapType:
		if _, err := mapGetter(t); err != nil {
			return schemas.Type{}, err
		}
		val, err := rowType(t.ItemType())
		if err != nil {
			return schemas.Type{}, InColumn(err, "value")
		}
		return schemas.Type{Kind: schemas.Map, Elem: &val}, nil
	case arrow.ListLikeType:
		elem, err := rowType(t.Elem())
		if err != nil {
			return schemas.Type{}, InColumn(err, "element")
		}
		return schemas.Type{Kind: schemas.Array, Elem: &elem}, nil
	case *arrow.StructType:
		fields, err := rowFields(t.Fields())
		if err != nil {
			return schemas.Type{}, err
		}
		return schemas.Type{Kind: schemas.Struct, Fields: fields}, nil
	}
	return schemas.Type{}, fmt.Errorf("has Arrow type %s, which sluice cannot read yet", dt)
}
