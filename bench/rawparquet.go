package main

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	_ "github.com/sluicehq/sluice/connectors/iceberg" // its zstd codec for arrow-go: 1 MiB window, as the sink compresses
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/arrowrow"
	"github.com/sluicehq/sluice/schemas/parquetrow"
)

// The Parquet raw limits write the same rows into one file by three writers, all with the
// sizes WriteToIceberg's files get by default (connectors/iceberg, writeView): zstd, data
// page v2, row groups that end once 4 MiB of compressed pages are written out, pages and
// dictionaries of 512 KiB (then plain encoding), pages of at most 20,000 rows. Rows go to
// each writer in batches of rawBatch, as a lane's batches.
const (
	rawBatch      = 4096
	rowGroupBytes = 4 << 20
	pageBytes     = 512 << 10
	pageRows      = 20_000
)

// rowSink is a Parquet writer of the raw limits: add buffers a row, close ends the file.
type rowSink interface {
	add(schemas.Row) error
	close() error
}

var rowSinks = map[string]func(*schemas.Schema, string) (rowSink, error){
	rawParquet:    newPQArrowSink,
	rawParquetGo:  newParquetGoSink,
	rawParquetRow: newParquetRowSink,
}

// batching calls write with every rawBatch rows added, and with the rest at close.
type batching struct {
	rows  []schemas.Row
	write func([]schemas.Row) error
	end   func() error
}

func (b *batching) add(row schemas.Row) error {
	if b.rows = append(b.rows, row); len(b.rows) < rawBatch {
		return nil
	}
	err := b.write(b.rows)
	b.rows = b.rows[:0]
	return err
}

func (b *batching) close() error {
	if len(b.rows) > 0 {
		if err := b.write(b.rows); err != nil {
			return err
		}
	}
	return b.end()
}

// writerProps are arrow-go's writer properties of the sink's files (iceberg-go's
// GetWriteProperties with sluice's sizes), for both arrow-go writers.
func writerProps(sc *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2),
		parquet.WithMaxRowGroupLength(1 << 20), parquet.WithDataPageSize(pageBytes), parquet.WithBatchSize(pageRows),
		parquet.WithDictionaryPageSizeLimit(pageBytes)}
	for _, f := range sc.Fields() {
		opts = append(opts, parquet.WithDictionaryCostFallbackFor(f.Name, true)) // as iceberg-go sets for every column
	}
	return parquet.NewWriterProperties(opts...)
}

// newPQArrowSink writes through Arrow records and pqarrow, as iceberg-go's writer does.
func newPQArrowSink(s *schemas.Schema, path string) (rowSink, error) {
	sc, err := arrowrow.ArrowSchema(s)
	if err != nil {
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	conv, err := arrowrow.NewConverter(sc, rowGetter(s))
	if err != nil {
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	fw, err := pqarrow.NewFileWriter(sc, f, writerProps(sc), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(memory.DefaultAllocator)))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	return &batching{
		write: func(rows []schemas.Row) error {
			rec, err := conv.Record(rows, nil)
			if err != nil {
				return fmt.Errorf("raw parquet: %w", err)
			}
			defer rec.Release()
			if fw.RowGroupTotalBytesWritten() >= rowGroupBytes { // as iceberg-go's ParquetFileWriter.Write
				if err := fw.NewBufferedRowGroupChecked(); err != nil {
					return fmt.Errorf("raw parquet: %w", err)
				}
			}
			if err := fw.WriteBuffered(rec); err != nil {
				return fmt.Errorf("raw parquet: %w", err)
			}
			return nil
		},
		end: func() error {
			if err := fw.Close(); err != nil { // closes the file
				return fmt.Errorf("raw parquet: %w", err)
			}
			return nil
		},
	}, nil
}

// newParquetRowSink writes with sluice's column encoder, no Arrow arrays.
func newParquetRowSink(s *schemas.Schema, path string) (rowSink, error) {
	sc, err := arrowrow.ArrowSchema(s)
	if err != nil {
		return nil, fmt.Errorf("raw parquetrow: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("raw parquetrow: %w", err)
	}
	pw, err := parquetrow.NewWriter(f, sc, rowGetter(s), writerProps(sc), rowGroupBytes)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &batching{
		write: pw.Write,
		end: func() error {
			_, err := pw.Close() // closes the file
			return err
		},
	}, nil
}

// newParquetGoSink writes with parquet-go's writer, column by column (ColumnWriters), every
// column dictionary-encoded until its dictionary reaches pageBytes, as arrow-go does. Its
// zstd is parquet-go's codec at the default level (klauspost's encoder, default window).
func newParquetGoSink(s *schemas.Schema, path string) (rowSink, error) {
	group := pq.Group{}
	values := make([]func(any) pq.Value, len(s.Fields))
	for i, f := range s.Fields {
		var node pq.Node
		switch f.Type.Kind {
		case schemas.Int64:
			node, values[i] = pq.Int(64), func(v any) pq.Value { return pq.Int64Value(v.(int64)) }
		case schemas.Float64:
			node, values[i] = pq.Leaf(pq.DoubleType), func(v any) pq.Value { return pq.DoubleValue(v.(float64)) }
		case schemas.String:
			node, values[i] = pq.String(), func(v any) pq.Value {
				x := v.(string)
				return pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(x), len(x)))
			}
		case schemas.Bool:
			node, values[i] = pq.Leaf(pq.BooleanType), func(v any) pq.Value { return pq.BooleanValue(v.(bool)) }
		case schemas.Timestamp:
			node, values[i] = pq.Timestamp(pq.Microsecond), func(v any) pq.Value { return pq.Int64Value(v.(time.Time).UnixMicro()) }
		default:
			return nil, fmt.Errorf("raw parquet-go: field %s of type %s is not supported", f.Name, f.Type)
		}
		if f.Type.Kind != schemas.Bool {
			node = pq.Encoded(node, &pq.RLEDictionary)
		}
		group[f.Name] = pq.Optional(node)
	}
	schema := pq.NewSchema("event", group)
	// The group orders its columns by name: the column of each field.
	colOf := make([]int, len(s.Fields))
	for i, f := range s.Fields {
		leaf, ok := schema.Lookup(f.Name)
		if !ok {
			return nil, fmt.Errorf("raw parquet-go: no column %s", f.Name)
		}
		colOf[i] = leaf.ColumnIndex
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("raw parquet-go: %w", err)
	}
	w := pq.NewWriter(f, schema, pq.Compression(&pqzstd.Codec{Level: pqzstd.DefaultLevel}), pq.DataPageVersion(2),
		pq.PageBufferSize(pageBytes), pq.DictionaryMaxBytes(pageBytes), pq.MaxRowsPerRowGroup(1<<20))
	var vals []pq.Value
	var flushed int64 // the file's size at the end of the last row group
	return &batching{
		write: func(rows []schemas.Row) error {
			for i, value := range values {
				col := colOf[i]
				vals = vals[:0]
				for _, row := range rows {
					if row[i] == nil {
						vals = append(vals, pq.NullValue().Level(0, 0, col))
					} else {
						vals = append(vals, value(row[i]).Level(0, 1, col))
					}
				}
				if _, err := w.ColumnWriters()[col].WriteRowValues(vals); err != nil {
					return fmt.Errorf("raw parquet-go: %w", err)
				}
			}
			if w.Size()-flushed >= rowGroupBytes {
				if err := w.Flush(); err != nil {
					return fmt.Errorf("raw parquet-go: %w", err)
				}
				flushed = w.Size()
			}
			return nil
		},
		end: func() error {
			if err := w.Close(); err != nil {
				f.Close()
				return fmt.Errorf("raw parquet-go: %w", err)
			}
			return f.Close()
		},
	}, nil
}

// rowGetter returns the getters of the columns of s's fields.
func rowGetter(s *schemas.Schema) func(string) func(schemas.Row) any {
	return func(name string) func(schemas.Row) any {
		i, ok := s.Index(name)
		if !ok {
			return nil
		}
		return func(r schemas.Row) any { return r[i] }
	}
}
