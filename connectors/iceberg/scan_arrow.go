package iceberg

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/sluicehq/sluice/schemas"
)

// getFn returns the value at row i of an Arrow array as a row holds it (nil for null).
type getFn func(a arrow.Array, i int) any

// rowReader turns Arrow record batches, as a table scan returns them, into rows of a schema:
// the reverse of converter. Columns are matched by name; it is rebuilt when the records'
// schema changes.
type rowReader struct {
	rows *schemas.Schema
	sc   *arrow.Schema // the schema the columns below were matched against
	cols []int         // per row field, the record's column
	gets []getFn
}

func newRowReader(rows *schemas.Schema) *rowReader { return &rowReader{rows: rows} }

// bind matches the row fields with the columns of sc.
func (r *rowReader) bind(sc *arrow.Schema) error {
	if r.sc != nil && r.sc.Equal(sc) {
		return nil
	}
	r.cols, r.gets = make([]int, len(r.rows.Fields)), make([]getFn, len(r.rows.Fields))
	for j, f := range r.rows.Fields {
		idx := sc.FieldIndices(f.Name)
		if len(idx) == 0 {
			return inColumn(fmt.Errorf("is missing from the data read"), f.Name)
		}
		get, err := getterFor(sc.Field(idx[0]).Type)
		if err != nil {
			return inColumn(err, f.Name)
		}
		r.cols[j], r.gets[j] = idx[0], get
	}
	r.sc = sc
	return nil
}

// read appends the rows [from, to) of rec to rows.
func (r *rowReader) read(rec arrow.RecordBatch, from, to int, rows []schemas.Row) ([]schemas.Row, error) {
	if err := r.bind(rec.Schema()); err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(r.cols))
	for j, c := range r.cols {
		cols[j] = rec.Column(c)
	}
	for i := from; i < to; i++ {
		row := make(schemas.Row, len(cols))
		for j, a := range cols {
			row[j] = r.gets[j](a, i)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func nullOr(get getFn) getFn {
	return func(a arrow.Array, i int) any {
		if a.IsNull(i) {
			return nil
		}
		return get(a, i)
	}
}

// getterFor returns the getFn for an Arrow type of a scanned Iceberg column.
func getterFor(dt arrow.DataType) (getFn, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return nullOr(func(a arrow.Array, i int) any { return a.(*array.Boolean).Value(i) }), nil
	case *arrow.Int32Type:
		return nullOr(func(a arrow.Array, i int) any { return int64(a.(*array.Int32).Value(i)) }), nil
	case *arrow.Int64Type:
		return nullOr(func(a arrow.Array, i int) any { return a.(*array.Int64).Value(i) }), nil
	case *arrow.Float32Type:
		return nullOr(func(a arrow.Array, i int) any { return float64(a.(*array.Float32).Value(i)) }), nil
	case *arrow.Float64Type:
		return nullOr(func(a arrow.Array, i int) any { return a.(*array.Float64).Value(i) }), nil
	case *arrow.StringType:
		return nullOr(func(a arrow.Array, i int) any { return strings.Clone(a.(*array.String).Value(i)) }), nil
	case *arrow.LargeStringType:
		return nullOr(func(a arrow.Array, i int) any { return strings.Clone(a.(*array.LargeString).Value(i)) }), nil
	case *arrow.StringViewType:
		return nullOr(func(a arrow.Array, i int) any { return strings.Clone(a.(*array.StringView).Value(i)) }), nil
	case *arrow.BinaryType:
		return nullOr(func(a arrow.Array, i int) any { return bytesCopy(a.(*array.Binary).Value(i)) }), nil
	case *arrow.LargeBinaryType:
		return nullOr(func(a arrow.Array, i int) any { return bytesCopy(a.(*array.LargeBinary).Value(i)) }), nil
	case *arrow.BinaryViewType:
		return nullOr(func(a arrow.Array, i int) any { return bytesCopy(a.(*array.BinaryView).Value(i)) }), nil
	case *arrow.TimestampType:
		toTime, err := t.GetToTimeFunc()
		if err != nil {
			return nil, err
		}
		return nullOr(func(a arrow.Array, i int) any { return toTime(a.(*array.Timestamp).Value(i)).UTC() }), nil
	case *arrow.Date32Type:
		return nullOr(func(a arrow.Array, i int) any { return a.(*array.Date32).Value(i).ToTime().UTC() }), nil
	case *arrow.Decimal128Type:
		scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)
		return nullOr(func(a arrow.Array, i int) any {
			return new(big.Rat).SetFrac(a.(*array.Decimal128).Value(i).BigInt(), scale)
		}), nil
	case arrow.ListLikeType:
		elem, err := getterFor(t.Elem())
		if err != nil {
			return nil, inColumn(err, "element")
		}
		if mt, ok := dt.(*arrow.MapType); ok {
			return mapGetter(mt)
		}
		return nullOr(func(a arrow.Array, i int) any {
			l := a.(array.ListLike)
			start, end := l.ValueOffsets(i)
			out := make([]any, 0, end-start)
			for k := start; k < end; k++ {
				out = append(out, elem(l.ListValues(), int(k)))
			}
			return out
		}), nil
	case *arrow.StructType:
		gets := make([]getFn, t.NumFields())
		for k, f := range t.Fields() {
			g, err := getterFor(f.Type)
			if err != nil {
				return nil, inColumn(err, f.Name)
			}
			gets[k] = g
		}
		return nullOr(func(a arrow.Array, i int) any {
			s := a.(*array.Struct)
			m := make(map[string]any, len(gets))
			for k, g := range gets {
				m[t.Field(k).Name] = g(s.Field(k), i)
			}
			return m
		}), nil
	}
	return nil, fmt.Errorf("has Arrow type %s, which sluice cannot read yet", dt)
}

func mapGetter(t *arrow.MapType) (getFn, error) {
	if !arrow.TypeEqual(t.KeyType(), arrow.BinaryTypes.String) && !arrow.TypeEqual(t.KeyType(), arrow.BinaryTypes.LargeString) {
		return nil, fmt.Errorf("has map keys of type %s: sluice reads maps with string keys only", t.KeyType())
	}
	key, err := getterFor(t.KeyType())
	if err != nil {
		return nil, err
	}
	val, err := getterFor(t.ItemType())
	if err != nil {
		return nil, inColumn(err, "value")
	}
	return nullOr(func(a arrow.Array, i int) any {
		m := a.(*array.Map)
		start, end := m.ValueOffsets(i)
		out := make(map[string]any, end-start)
		for k := start; k < end; k++ {
			out[key(m.Keys(), int(k)).(string)] = val(m.Items(), int(k))
		}
		return out
	}), nil
}

// bytesCopy copies b out of an Arrow buffer (so are strings): rows must not pin the buffers
// of a batch that is released once read.
func bytesCopy(b []byte) []byte { return append([]byte{}, b...) }
