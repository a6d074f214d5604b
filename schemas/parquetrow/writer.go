// Package parquetrow writes sluice rows into a Parquet file column by column with arrow-go's
// column chunk writers, without building Arrow arrays first (issue 21, target 3: WriteToIceberg
// spent 9% of its CPU converting rows into Arrow records for pqarrow). The Parquet
// schema is the one pqarrow derives from the same Arrow schema (field ids included), so a
// reader sees the same file as through pqarrow. Flat schemas of primitive columns only;
// NewWriter returns ErrUnsupported for the others.
package parquetrow

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/sluicehq/sluice/schemas"
)

// ErrUnsupported is the error of a schema with a column this writer does not encode (nested,
// decimal, ...): write it through pqarrow.
var ErrUnsupported = errors.New("parquetrow: the schema has a column this writer does not encode")

// Writer writes rows into one Parquet file. It is not safe for concurrent use.
type Writer struct {
	fw            *file.Writer
	rg            file.BufferedRowGroupWriter
	cols          []*column
	rowGroupBytes int64
	rows          int64 // written, in ended row groups too
	closed        bool
}

// column is one column's values of the rows of a Write, before they go to its chunk writer.
type column struct {
	name     string
	get      func(schemas.Row) any
	optional bool
	def      []int16 // definition levels (optional columns): 1 for a value, 0 for null
	put      func(v any) error
	write    func(cw file.ColumnChunkWriter, def []int16) error // the buffered values, then reset
}

// RowError is the error of the row at Index of a Write whose value does not fit its column;
// no row of that Write was written.
type RowError struct {
	Index  int
	Column string
	Err    error
}

func (e *RowError) Error() string { return fmt.Sprintf("column %q %v", e.Column, e.Err) }
func (e *RowError) Unwrap() error { return e.Err }

// NewWriter prepares writing rows into w as a Parquet file of the Arrow schema sc (its fields'
// PARQUET:field_id metadata become the columns' field ids) with props; get returns the getter
// of a top-level column, or nil when the rows do not have it (the column is null). A row group
// ends once its pages written out reach rowGroupBytes, as iceberg-go's writer does.
func NewWriter(w io.Writer, sc *arrow.Schema, get func(name string) func(schemas.Row) any, props *parquet.WriterProperties, rowGroupBytes int64) (*Writer, error) {
	cols := make([]*column, 0, sc.NumFields())
	for _, f := range sc.Fields() {
		c, err := newColumn(f)
		if err != nil {
			return nil, err
		}
		if c.get = get(f.Name); c.get == nil {
			c.get = func(schemas.Row) any { return nil }
		}
		cols = append(cols, c)
	}
	psc, err := pqarrow.ToParquet(sc, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("parquetrow: %w", err)
	}
	fw, err := file.NewParquetWriterWithError(w, psc.Root(), file.WithWriterProps(props))
	if err != nil {
		return nil, fmt.Errorf("parquetrow: %w", err)
	}
	return &Writer{fw: fw, cols: cols, rowGroupBytes: rowGroupBytes}, nil
}

// Write encodes rows into the file's current row group, ending it when it is full. A value
// that does not fit its column is a *RowError, and then no row of rows was written.
func (w *Writer) Write(rows []schemas.Row) error {
	if w.closed {
		return errors.New("parquetrow: write after Close")
	}
	for _, c := range w.cols {
		if err := c.buffer(rows); err != nil {
			for _, o := range w.cols {
				o.reset()
			}
			return err
		}
	}
	if w.rg == nil {
		rg, err := w.fw.AppendBufferedRowGroupChecked()
		if err != nil {
			return fmt.Errorf("parquetrow: %w", err)
		}
		w.rg = rg
	}
	for i, c := range w.cols {
		cw, err := w.rg.Column(i)
		if err != nil {
			return fmt.Errorf("parquetrow: %w", err)
		}
		def := c.def
		if !c.optional {
			def = nil
		}
		if err := c.write(cw, def); err != nil {
			return fmt.Errorf("parquetrow: column %q: %w", c.name, err)
		}
	}
	w.rows += int64(len(rows))
	// As pqarrow's buffered writes: a row group ends by its size, or by its rows (checked
	// between writes, so a row group may pass the limit by a batch).
	if n, _ := w.rg.NumRows(); w.rg.TotalBytesWritten() >= w.rowGroupBytes || int64(n) >= w.fw.Properties().MaxRowGroupLength() {
		return w.endRowGroup()
	}
	return nil
}

// buffer puts the column's values of rows into its buffer.
func (c *column) buffer(rows []schemas.Row) error {
	c.def = c.def[:0]
	for i, row := range rows {
		v := c.get(row)
		if v == nil {
			if !c.optional {
				return &RowError{Index: i, Column: c.name, Err: errors.New("is null but the column is required")}
			}
			c.def = append(c.def, 0)
			continue
		}
		if err := c.put(v); err != nil {
			return &RowError{Index: i, Column: c.name, Err: err}
		}
		c.def = append(c.def, 1)
	}
	return nil
}

// reset drops the values buffered by a failed Write.
func (c *column) reset() {
	c.def = c.def[:0]
	_ = c.write(nil, nil)
}

func (w *Writer) endRowGroup() error {
	if w.rg == nil {
		return nil
	}
	err := w.rg.Close()
	w.rg = nil
	if err != nil {
		return fmt.Errorf("parquetrow: %w", err)
	}
	return nil
}

// BytesWritten is the size of the file so far: what went out to w and the current row
// group's pages (compressed), as iceberg-go counts a file's size to roll it.
func (w *Writer) BytesWritten() int64 {
	n := w.fw.TotalBytesWritten()
	if w.rg != nil {
		n += w.rg.TotalBytesWritten() + w.rg.TotalCompressedBytes()
	}
	return n
}

// Held is about how many bytes the open row group holds in memory until it ends: its pages
// cut so far (compressed) and each column's current page and dictionary (uncompressed), as
// arrow-go's writer buffers a row group whole.
func (w *Writer) Held() int64 {
	if w.rg == nil {
		return 0
	}
	n := w.rg.TotalBytesWritten()
	for i := range w.cols {
		cw, err := w.rg.Column(i)
		if err != nil {
			continue
		}
		enc := cw.CurrentEncoder()
		n += enc.EstimatedDataEncodedSize()
		if d, ok := enc.(interface{ DictEncodedSize() int }); ok {
			n += int64(d.DictEncodedSize())
		}
	}
	return n
}

// EndRowGroup ends the open row group, if any, writing its pages out to the file: what it
// held is released, and the next Write starts another row group.
func (w *Writer) EndRowGroup() error {
	if w.closed {
		return errors.New("parquetrow: end of a row group after Close")
	}
	return w.endRowGroup()
}

// Rows is the number of rows written so far, the current row group's too. (arrow-go's
// NumRows counts an ended row group only once the next one starts: a file whose one row
// group ended at its last Write would have seemed empty, and been dropped.)
func (w *Writer) Rows() int64 { return w.rows }

// Close ends the file, writes its footer and closes w when it is an io.Closer; it returns
// the file's metadata (row groups, column chunks and their statistics).
func (w *Writer) Close() (*metadata.FileMetaData, error) {
	if w.closed {
		return nil, errors.New("parquetrow: closed twice")
	}
	w.closed = true
	if err := w.endRowGroup(); err != nil {
		_ = w.fw.Close()
		return nil, err
	}
	if err := w.fw.Close(); err != nil {
		return nil, fmt.Errorf("parquetrow: %w", err)
	}
	meta, err := w.fw.FileMetadata()
	if err != nil {
		return nil, fmt.Errorf("parquetrow: %w", err)
	}
	return meta, nil
}

// newColumn returns the column of an Arrow field of the types sluice's rows carry.
func newColumn(f arrow.Field) (*column, error) {
	c := &column{name: f.Name, optional: f.Nullable}
	switch t := f.Type.(type) {
	case *arrow.BooleanType:
		typed(c, func(v any) (bool, error) {
			x, ok := v.(bool)
			return x, check(ok, v, "a boolean")
		}, writeBatch[bool, *file.BooleanColumnChunkWriter])
	case *arrow.Int64Type:
		typed(c, func(v any) (int64, error) {
			x, ok := v.(int64)
			return x, check(ok, v, "an integer")
		}, writeBatch[int64, *file.Int64ColumnChunkWriter])
	case *arrow.Int32Type:
		typed(c, func(v any) (int32, error) {
			x, ok := v.(int64)
			return int32(x), check(ok && x >= math.MinInt32 && x <= math.MaxInt32, v, "a 32-bit integer (the column's type)")
		}, writeBatch[int32, *file.Int32ColumnChunkWriter])
	case *arrow.Float64Type:
		typed(c, func(v any) (float64, error) {
			x, ok := v.(float64)
			return x, check(ok, v, "a number")
		}, writeBatch[float64, *file.Float64ColumnChunkWriter])
	case *arrow.Float32Type:
		typed(c, func(v any) (float32, error) {
			x, ok := v.(float64)
			return float32(x), check(ok, v, "a number")
		}, writeBatch[float32, *file.Float32ColumnChunkWriter])
	case *arrow.StringType, *arrow.LargeStringType:
		// The column writer copies the bytes into its pages before Write returns.
		typed(c, func(v any) (parquet.ByteArray, error) {
			x, ok := v.(string)
			return unsafe.Slice(unsafe.StringData(x), len(x)), check(ok, v, "a string")
		}, writeBatch[parquet.ByteArray, *file.ByteArrayColumnChunkWriter])
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		typed(c, func(v any) (parquet.ByteArray, error) {
			x, ok := v.([]byte)
			return x, check(ok, v, "bytes")
		}, writeBatch[parquet.ByteArray, *file.ByteArrayColumnChunkWriter])
	case *arrow.TimestampType:
		typed(c, func(v any) (int64, error) {
			x, ok := v.(time.Time)
			if !ok {
				return 0, check(ok, v, "a timestamp")
			}
			ts, err := arrow.TimestampFromTime(x, t.Unit)
			return int64(ts), err
		}, writeBatch[int64, *file.Int64ColumnChunkWriter])
	case *arrow.Date32Type:
		typed(c, func(v any) (int32, error) {
			x, ok := v.(time.Time)
			return int32(arrow.Date32FromTime(x)), check(ok, v, "a date")
		}, writeBatch[int32, *file.Int32ColumnChunkWriter])
	default:
		return nil, fmt.Errorf("%w: column %q is %s", ErrUnsupported, f.Name, f.Type)
	}
	return c, nil
}

// check returns nil when ok, else the error of a value that is not want.
func check(ok bool, v any, want string) error {
	if ok {
		return nil
	}
	return fmt.Errorf("holds %v, which is not %s", v, want)
}

// typed sets c's put and write for values of type T.
func typed[T any](c *column, conv func(any) (T, error), batch func(file.ColumnChunkWriter, []T, []int16) error) {
	var vals []T
	c.put = func(v any) error {
		x, err := conv(v)
		if err != nil {
			return err
		}
		vals = append(vals, x)
		return nil
	}
	c.write = func(cw file.ColumnChunkWriter, def []int16) error {
		defer func() { vals = vals[:0] }()
		if cw == nil {
			return nil
		}
		return batch(cw, vals, def)
	}
}

// writeBatch hands values and definition levels to a column chunk writer of type W.
func writeBatch[T any, W interface {
	WriteBatch([]T, []int16, []int16) (int64, error)
}](cw file.ColumnChunkWriter, vals []T, def []int16) error {
	w, ok := cw.(W)
	if !ok {
		return fmt.Errorf("the column writer is %T", cw)
	}
	_, err := w.WriteBatch(vals, def, nil)
	return err
}

// dictionaryPage is format.PageType DICTIONARY_PAGE (arrow-go keeps the type internal).
const dictionaryPage = 2

// PlainColumns returns the columns of a file some of whose data pages are plain-encoded while
// dictionaries were on: those whose dictionary outgrew its limit and fell back to plain.
func PlainColumns(meta *metadata.FileMetaData) map[string]bool {
	out := map[string]bool{}
	for i := range meta.NumRowGroups() {
		rg := meta.RowGroup(i)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				continue
			}
			for _, st := range cc.EncodingStats() {
				if int(st.PageType) != dictionaryPage && st.Encoding == parquet.Encodings.Plain {
					out[cc.PathInSchema().String()] = true
				}
			}
		}
	}
	return out
}
