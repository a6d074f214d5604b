package arrowrow

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/sluicehq/sluice/schemas"
)

// AppendFn appends one value (nil: null) to a builder of the Arrow type it was made for.
type AppendFn func(b array.Builder, v any) error

// Converter turns rows into Arrow record batches of an Arrow schema (a table's, a file's):
// one getter per column picks the value out of a row (nil for a column the rows do not have).
type Converter struct {
	schema  *arrow.Schema
	getters []func(schemas.Row) any
	appends []AppendFn
}

// NewConverter prepares the conversion of rows into records of sc;
// get returns the getter of a top-level column, or nil when the rows do not have it.
func NewConverter(sc *arrow.Schema, get func(name string) func(schemas.Row) any) (*Converter, error) {
	c := &Converter{schema: sc}
	for _, f := range sc.Fields() {
		app, err := AppenderFor(f.Type)
		if err != nil {
			return nil, InColumn(err, f.Name)
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

// Schema is the Arrow schema of the records the converter makes.
func (c *Converter) Schema() *arrow.Schema { return c.schema }

// Record converts rows into one record batch; the caller owns it. pos, when it has an entry
// per row, names the record of a failing row in the error.
func (c *Converter) Record(rows []schemas.Row, pos []schemas.Position) (arrow.RecordBatch, error) {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer rb.Release()
	rb.Reserve(len(rows))
	for r, row := range rows {
		for i, app := range c.appends {
			if err := app(rb.Field(i), c.getters[i](row)); err != nil {
				re := &RowError{Index: r, Err: InColumn(err, c.schema.Field(i).Name)}
				if r < len(pos) {
					re.Pos = &pos[r]
				}
				return nil, re
			}
		}
	}
	return rb.NewRecordBatch(), nil
}

// RowError is the error of the row at Index of a batch that cannot be converted; Pos, when
// known, is its record's position.
type RowError struct {
	Index int
	Pos   *schemas.Position
	Err   error
}

func (e *RowError) Error() string {
	if e.Pos == nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (record at %s)", e.Err, *e.Pos)
}

func (e *RowError) Unwrap() error { return e.Err }

func nullable(app AppendFn) AppendFn {
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

// AppenderFor returns the AppendFn for an Arrow type (those ArrowSchema and Iceberg's
// table.SchemaToArrowSchema make).
func AppenderFor(dt arrow.DataType) (AppendFn, error) {
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
			d, err := ToDecimal128(x, t.Precision, t.Scale)
			if err != nil {
				return err
			}
			b.(*array.Decimal128Builder).Append(d)
			return nil
		}), nil
	case *arrow.ListType:
		elem, err := AppenderFor(t.Elem())
		if err != nil {
			return nil, InColumn(err, "element")
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
					return InColumn(err, fmt.Sprintf("[%d]", i))
				}
			}
			return nil
		}), nil
	case *arrow.MapType:
		val, err := AppenderFor(t.ItemType())
		if err != nil {
			return nil, InColumn(err, "value")
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
					return InColumn(err, k)
				}
			}
			return nil
		}), nil
	case *arrow.StructType:
		fields := make([]AppendFn, t.NumFields())
		for i, f := range t.Fields() {
			app, err := AppenderFor(f.Type)
			if err != nil {
				return nil, InColumn(err, f.Name)
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
					return InColumn(err, t.Field(i).Name)
				}
			}
			return nil
		}), nil
	}
	return nil, fmt.Errorf("has a type sluice cannot write yet (%s)", dt)
}

// ErrDecimalFit is the error of a decimal too large for its column's precision.
var ErrDecimalFit = errors.New("does not fit the column's decimal type")

// ToDecimal128 returns r scaled to scale; r must have at most scale decimal places and fit
// precision (ErrDecimalFit).
func ToDecimal128(r *big.Rat, precision, scale int32) (decimal128.Num, error) {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !scaled.IsInt() {
		return decimal128.Num{}, fmt.Errorf("holds %s, which has more than %d decimal places", r.FloatString(int(scale)+4), scale)
	}
	n := decimal128.FromBigInt(scaled.Num())
	if !n.FitsInPrecision(precision) {
		return decimal128.Num{}, fmt.Errorf("holds %s, which %w (precision %d)", r.FloatString(int(scale)), ErrDecimalFit, precision)
	}
	return n, nil
}

// GetFn returns the value at row i of an Arrow array as a row holds it (nil for null).
type GetFn func(a arrow.Array, i int) any

// RowReader turns Arrow record batches (a table scan's, a Parquet file's) into rows of a
// schema: the reverse of Converter. Columns are matched by name; it is rebuilt when the records'
// schema changes.
type RowReader struct {
	rows *schemas.Schema
	sc   *arrow.Schema // the schema the columns below were matched against
	cols []int         // per row field, the record's column
	gets []GetFn
}

func NewRowReader(rows *schemas.Schema) *RowReader { return &RowReader{rows: rows} }

// Schema is the schema of the rows the reader makes.
func (r *RowReader) Schema() *schemas.Schema { return r.rows }

// bind matches the row fields with the columns of sc.
func (r *RowReader) bind(sc *arrow.Schema) error {
	if r.sc != nil && r.sc.Equal(sc) {
		return nil
	}
	r.cols, r.gets = make([]int, len(r.rows.Fields)), make([]GetFn, len(r.rows.Fields))
	for j, f := range r.rows.Fields {
		idx := sc.FieldIndices(f.Name)
		if len(idx) == 0 {
			return InColumn(fmt.Errorf("is missing from the data read"), f.Name)
		}
		get, err := GetterFor(sc.Field(idx[0]).Type)
		if err != nil {
			return InColumn(err, f.Name)
		}
		r.cols[j], r.gets[j] = idx[0], get
	}
	r.sc = sc
	return nil
}

// Read appends the rows [from, to) of rec to rows. The rows share one backing slice, and the
// values of a top-level string column share one copy of the column's bytes: two allocations
// per column and batch instead of one per row and value, which was a fifth of the CPU of an
// Iceberg -> Kafka run (BENCHMARKS.md, Performance II, target 5). The copy is needed since
// the records' buffers may be reused or freed once released.
func (r *RowReader) Read(rec arrow.RecordBatch, from, to int, rows []schemas.Row) ([]schemas.Row, error) {
	if err := r.bind(rec.Schema()); err != nil {
		return nil, err
	}
	n := len(r.cols)
	cols := make([]arrow.Array, n)
	strs := make([]*stringColumn, n)
	for j, c := range r.cols {
		cols[j] = rec.Column(c)
		if a, ok := cols[j].(*array.String); ok && to > from {
			strs[j] = copyStrings(a, from, to)
		}
	}
	slab := make([]any, (to-from)*n)
	for i := from; i < to; i++ {
		row := schemas.Row(slab[:n:n])
		slab = slab[n:]
		for j, a := range cols {
			if s := strs[j]; s != nil {
				if !a.IsNull(i) {
					row[j] = s.value(i)
				}
				continue
			}
			row[j] = r.gets[j](a, i)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// stringColumn is the bytes of rows [from, to) of a string array, copied once.
type stringColumn struct {
	data string
	offs []int32 // the array's value offsets
	base int32   // offs[from], where data starts
}

func copyStrings(a *array.String, from, to int) *stringColumn {
	offs := a.ValueOffsets()
	all := a.ValueBytes() // starts at offs[0]
	return &stringColumn{data: string(all[offs[from]-offs[0] : offs[to]-offs[0]]), offs: offs, base: offs[from]}
}

func (s *stringColumn) value(i int) string { return s.data[s.offs[i]-s.base : s.offs[i+1]-s.base] }

func nullOr(get GetFn) GetFn {
	return func(a arrow.Array, i int) any {
		if a.IsNull(i) {
			return nil
		}
		return get(a, i)
	}
}

// GetterFor returns the GetFn for an Arrow type.
func GetterFor(dt arrow.DataType) (GetFn, error) {
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
		elem, err := GetterFor(t.Elem())
		if err != nil {
			return nil, InColumn(err, "element")
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
		gets := make([]GetFn, t.NumFields())
		for k, f := range t.Fields() {
			g, err := GetterFor(f.Type)
			if err != nil {
				return nil, InColumn(err, f.Name)
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

func mapGetter(t *arrow.MapType) (GetFn, error) {
	if !arrow.TypeEqual(t.KeyType(), arrow.BinaryTypes.String) && !arrow.TypeEqual(t.KeyType(), arrow.BinaryTypes.LargeString) {
		return nil, fmt.Errorf("has map keys of type %s: sluice reads maps with string keys only", t.KeyType())
	}
	key, err := GetterFor(t.KeyType())
	if err != nil {
		return nil, err
	}
	val, err := GetterFor(t.ItemType())
	if err != nil {
		return nil, InColumn(err, "value")
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

// ColumnError names the column, nested ones joined with ".", that a problem is about.
type ColumnError struct {
	Path string
	Err  error
}

func (e *ColumnError) Error() string { return fmt.Sprintf("column %q %v", e.Path, e.Err) }
func (e *ColumnError) Unwrap() error { return e.Err }

// InColumn puts err in column name: a ColumnError, whose path grows when err already is one
// (of a nested column).
func InColumn(err error, name string) error {
	var ce *ColumnError
	if errors.As(err, &ce) {
		ce.Path = name + "." + ce.Path
		return ce
	}
	return &ColumnError{Path: name, Err: err}
}
