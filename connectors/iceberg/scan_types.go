package iceberg

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/sluicehq/sluice/schemas"
)

// rowSchema returns the schema of the rows the read sources make from a table of schema sc:
// the reverse of tableSchema (ints widen to integer, floats to number, timestamps with or
// without zone become timestamps). Columns of a type sluice cannot read (time, uuid, fixed,
// variant, ...) are left out and reported in skipped, so that config checks can name them.
func rowSchema(sc *iceberg.Schema) (rows *schemas.Schema, skipped map[string]error) {
	skipped = map[string]error{}
	var fields []schemas.Field
	for _, c := range sc.Fields() {
		t, err := rowType(c.Type)
		if err != nil {
			skipped[c.Name] = inColumn(err, c.Name)
			continue
		}
		fields = append(fields, schemas.Field{Name: c.Name, Type: t, Nullable: !c.Required})
	}
	return schemas.New(fields...), skipped
}

func rowType(t iceberg.Type) (schemas.Type, error) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return schemas.Type{Kind: schemas.Bool}, nil
	case iceberg.Int32Type, iceberg.Int64Type:
		return schemas.Type{Kind: schemas.Int64}, nil
	case iceberg.Float32Type, iceberg.Float64Type:
		return schemas.Type{Kind: schemas.Float64}, nil
	case iceberg.StringType:
		return schemas.Type{Kind: schemas.String}, nil
	case iceberg.BinaryType:
		return schemas.Type{Kind: schemas.Bytes}, nil
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return schemas.Type{Kind: schemas.Timestamp}, nil
	case iceberg.DateType:
		return schemas.Type{Kind: schemas.Date}, nil
	case iceberg.DecimalType:
		return schemas.Type{Kind: schemas.Decimal, Precision: t.Precision(), Scale: t.Scale()}, nil
	case *iceberg.ListType:
		e, err := rowType(t.Element)
		if err != nil {
			return schemas.Type{}, inColumn(err, "element")
		}
		return schemas.Type{Kind: schemas.Array, Elem: &e}, nil
	case *iceberg.MapType:
		if !t.KeyType.Equals(iceberg.PrimitiveTypes.String) {
			return schemas.Type{}, fmt.Errorf("has type %s: sluice reads maps with string keys only", t)
		}
		v, err := rowType(t.ValueType)
		if err != nil {
			return schemas.Type{}, inColumn(err, "value")
		}
		return schemas.Type{Kind: schemas.Map, Elem: &v}, nil
	case *iceberg.StructType:
		var fs []schemas.Field
		for _, f := range t.FieldList {
			ft, err := rowType(f.Type)
			if err != nil {
				return schemas.Type{}, inColumn(err, f.Name)
			}
			fs = append(fs, schemas.Field{Name: f.Name, Type: ft, Nullable: !f.Required})
		}
		return schemas.Type{Kind: schemas.Struct, Fields: fs}, nil
	}
	return schemas.Type{}, fmt.Errorf("has type %s, which sluice cannot read yet; leave it out with drop", t)
}

// sameRows reports how rows of want differ from rows of got (a table's rows): a field got
// lacks, or has with another type. Nullability is not compared: a table may relax it.
func sameRows(want, got *schemas.Schema) error {
	var errs []error
	for _, f := range want.Fields {
		g, ok := got.Field(f.Name)
		switch {
		case !ok:
			errs = append(errs, inColumn(errors.New("is not in the table"), f.Name))
		case g.Type.String() != f.Type.String():
			errs = append(errs, inColumn(fmt.Errorf("has type %s in the table, not %s", g.Type, f.Type), f.Name))
		}
	}
	return errors.Join(errs...)
}
