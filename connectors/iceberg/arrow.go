package iceberg

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicehq/sluice/schemas"
)

// appendFn appends one value (nil: null) to a builder of the Arrow type it was made for.
type appendFn func(b array.Builder, v any) error

// converter turns rows into Arrow record batches of the table's schema: one getter per table
// column picks the value out of a row (nil for a column the rows do not have).
type converter struct {
	schema  *arrow.Schema
	getters []func(schemas.Row) any
	appends []appendFn
}

// newConverter prepares the conversion of rows into records of sc, the table's Arrow schema;
// get returns the getter of a top-level column, or nil when the rows do not have it.
func newConverter(sc *arrow.Schema, get func(name string) func(schemas.Row) any) (*converter, error) {
	c := &converter{schema: sc}
	for _, f := range sc.Fields() {
		app, err := appenderFor(f.Type)
		if err != nil {
			return nil, inColumn(err, f.Name)
		}
		g := get(f.Name)
		if g == nil {
			g = func(schemas.Row) any { return nil }
		}
		c.getters = append(c.getters, g)
		c.appends = append(c.appends, app)
	}
	return c, nil
}

// record converts rows into one record batch; the caller owns it. pos, when it has an entry
// per row, names the record of a failing row in the error.
func (c *converter) record(rows []schemas.Row, pos []schemas.Position) (arrow.RecordBatch, error) {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer rb.Release()
	rb.Reserve(len(rows))
	for r, row := range rows {
		for i, app := range c.appends {
			if err := app(rb.Field(i), c.getters[i](row)); err != nil {
				re := &rowError{index: r, err: inColumn(err, c.schema.Field(i).Name)}
				if r < len(pos) {
					re.pos = &pos[r]
				}
				return nil, re
			}
		}
	}
	return rb.NewRecordBatch(), nil
}

// rowError is the error of the row at index of a batch that cannot be converted.
type rowError struct {
	index int
	pos   *schemas.Position
	err   error
}

func (e *rowError) Error() string {
	if e.pos == nil {
		return e.err.Error()
	}
	return fmt.Sprintf("%v (record at %s)", e.err, *e.pos)
}

func (e *rowError) Unwrap() error { return e.err }

func nullable(app appendFn) appendFn {
	return func(b array.Builder, v any) error {
		if v == nil {
			b.AppendNull()
			return nil
		}
		return app(b, v)
	}
}

func mismatch(v any, want string) error {
	return fmt.Errorf("holds %v, which is not %s", v, want)
}

// appenderFor returns the appendFn for an Arrow type of an Iceberg table (as
// table.SchemaToArrowSchema makes them).
func appenderFor(dt arrow.DataType) (appendFn, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(bool)
			if !ok {
				return mismatch(v, "a boolean")
			}
			b.(*array.BooleanBuilder).Append(x)
			return nil
		}), nil
	case *arrow.Int64Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(int64)
			if !ok {
				return mismatch(v, "an integer")
			}
			b.(*array.Int64Builder).Append(x)
			return nil
		}), nil
	case *arrow.Int32Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(int64)
			if !ok || x < math.MinInt32 || x > math.MaxInt32 {
				return mismatch(v, "a 32-bit integer (the column's type)")
			}
			b.(*array.Int32Builder).Append(int32(x))
			return nil
		}), nil
	case *arrow.Float64Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(float64)
			if !ok {
				return mismatch(v, "a number")
			}
			b.(*array.Float64Builder).Append(x)
			return nil
		}), nil
	case *arrow.Float32Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(float64)
			if !ok {
				return mismatch(v, "a number")
			}
			b.(*array.Float32Builder).Append(float32(x))
			return nil
		}), nil
	case *arrow.StringType:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(string)
			if !ok {
				return mismatch(v, "a string")
			}
			b.(*array.StringBuilder).Append(x)
			return nil
		}), nil
	case *arrow.LargeStringType:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(string)
			if !ok {
				return mismatch(v, "a string")
			}
			b.(*array.LargeStringBuilder).Append(x)
			return nil
		}), nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.([]byte)
			if !ok {
				return mismatch(v, "bytes")
			}
			b.(*array.BinaryBuilder).Append(x)
			return nil
		}), nil
	case *arrow.TimestampType:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(time.Time)
			if !ok {
				return mismatch(v, "a timestamp")
			}
			ts, err := arrow.TimestampFromTime(x, t.Unit)
			if err != nil {
				return err
			}
			b.(*array.TimestampBuilder).Append(ts)
			return nil
		}), nil
	case *arrow.Date32Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(time.Time)
			if !ok {
				return mismatch(v, "a date")
			}
			b.(*array.Date32Builder).Append(arrow.Date32FromTime(x))
			return nil
		}), nil
	case *arrow.Decimal128Type:
		return nullable(func(b array.Builder, v any) error {
			x, ok := v.(*big.Rat)
			if !ok {
				return mismatch(v, "a decimal")
			}
			d, err := toDecimal128(x, t.Precision, t.Scale)
			if err != nil {
				return err
			}
			b.(*array.Decimal128Builder).Append(d)
			return nil
		}), nil
	case *arrow.ListType:
		elem, err := appenderFor(t.Elem())
		if err != nil {
			return nil, inColumn(err, "element")
		}
		return nullable(func(b array.Builder, v any) error {
			xs, ok := v.([]any)
			if !ok {
				return mismatch(v, "an array")
			}
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			for i, x := range xs {
				if err := elem(lb.ValueBuilder(), x); err != nil {
					return inColumn(err, fmt.Sprintf("[%d]", i))
				}
			}
			return nil
		}), nil
	case *arrow.MapType:
		val, err := appenderFor(t.ItemType())
		if err != nil {
			return nil, inColumn(err, "value")
		}
		return nullable(func(b array.Builder, v any) error {
			m, ok := v.(map[string]any)
			if !ok {
				return mismatch(v, "a map")
			}
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				mb.KeyBuilder().(*array.StringBuilder).Append(k)
				if err := val(mb.ItemBuilder(), m[k]); err != nil {
					return inColumn(err, k)
				}
			}
			return nil
		}), nil
	case *arrow.StructType:
		fields := make([]appendFn, t.NumFields())
		for i, f := range t.Fields() {
			app, err := appenderFor(f.Type)
			if err != nil {
				return nil, inColumn(err, f.Name)
			}
			fields[i] = app
		}
		return nullable(func(b array.Builder, v any) error {
			m, ok := v.(map[string]any)
			if !ok {
				return mismatch(v, "a struct")
			}
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			for i, app := range fields {
				if err := app(sb.FieldBuilder(i), m[t.Field(i).Name]); err != nil {
					return inColumn(err, t.Field(i).Name)
				}
			}
			return nil
		}), nil
	}
	return nil, fmt.Errorf("has a type sluice cannot write yet (%s)", dt)
}

var errDecimalFit = errors.New("does not fit the column's decimal type")

// toDecimal128 returns r scaled to scale; r must have at most scale decimal places.
func toDecimal128(r *big.Rat, precision, scale int32) (decimal128.Num, error) {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !scaled.IsInt() {
		return decimal128.Num{}, fmt.Errorf("holds %s, which has more than %d decimal places", r.FloatString(int(scale)+4), scale)
	}
	n := decimal128.FromBigInt(scaled.Num())
	if !n.FitsInPrecision(precision) {
		return decimal128.Num{}, fmt.Errorf("holds %s, which %w (precision %d)", r.FloatString(int(scale)), errDecimalFit, precision)
	}
	return n, nil
}
