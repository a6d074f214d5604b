package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/arrowrow"
)

// Parquet files are read and written with arrow-go's pqarrow (the library Iceberg's data
// files go through), rows converted to and from Arrow records by schemas/arrowrow. A
// record's offset is its row number in the file. Rows are decoded while reading: a Parquet
// file holds typed columns, so there is nothing for a lane to decode and nothing that fails.

// parquetBatchRows is how many rows the reader converts at a time.
const parquetBatchRows = maxBatchLines

func buildReadParquet(ctx *component.Context, cfg *ReadFileConfig) (component.Source, error) {
	schema := fileSchema(ctx, cfg.Path, parquetFileSchema)
	if schema == nil {
		return nil, nil
	}
	ctx.Output(component.Main, schema)
	format := fileFormat{open: func(f *os.File, name string, _, off int64) (records, error) {
		return openParquet(f, name, off, schema)
	}}
	return newSource(cfg.Path, schema, format, nil), nil
}

// parquetReader opens a Parquet file for reading as Arrow records.
func parquetReader(f *os.File, name string) (*pqarrow.FileReader, error) {
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s is not a Parquet file: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return fr, nil
}

// parquetFileSchema returns the row schema of a Parquet file's columns.
func parquetFileSchema(name string) (*schemas.Schema, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	fr, err := parquetReader(f, name)
	if err != nil {
		return nil, err
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	s, err := arrowrow.SchemaOf(sc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// parquetRecords reads the rows of a Parquet file, a record batch at a time.
type parquetRecords struct {
	name string
	rr   pqarrow.RecordReader
	rows *arrowrow.RowReader
	buf  []schemas.Row // rows of the current record batch not returned yet
	n    int64         // rows returned (the next row's number)
}

func (r *parquetRecords) offset() int64 { return r.n }

func (r *parquetRecords) next() (record, error) {
	for len(r.buf) == 0 {
		if r.rr == nil {
			return record{}, io.EOF
		}
		if !r.rr.Next() {
			err := r.rr.Err()
			r.rr.Release()
			r.rr = nil
			if err != nil && !errors.Is(err, io.EOF) {
				return record{}, fmt.Errorf("read %s: %w", r.name, err)
			}
			return record{}, io.EOF
		}
		rec := r.rr.RecordBatch()
		rows, err := r.rows.Read(rec, 0, int(rec.NumRows()), make([]schemas.Row, 0, rec.NumRows()))
		if err != nil {
			return record{}, fmt.Errorf("read %s: %w", r.name, err)
		}
		r.buf = rows
	}
	rec := record{row: r.buf[0], start: r.n}
	r.buf, r.n = r.buf[1:], r.n+1
	return rec, nil
}

// openParquet opens a Parquet file at row off.
func openParquet(f *os.File, name string, off int64, schema *schemas.Schema) (records, error) {
	fr, err := parquetReader(f, name)
	if err != nil {
		return nil, err
	}
	switch total := fr.ParquetReader().NumRows(); {
	case off > total:
		return nil, fmt.Errorf("the checkpoint resumes %s at row %d, but the file has %d rows: it was truncated or replaced since; restore it, or write to a new output to read it from the start", name, off, total)
	case off == total:
		return &parquetRecords{name: name, n: off}, nil // read to its end already
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if off > 0 {
		if err := rr.SeekToRow(off); err != nil {
			rr.Release()
			return nil, fmt.Errorf("read %s from row %d: %w", name, off, err)
		}
	}
	return &parquetRecords{name: name, rr: rr, rows: arrowrow.NewRowReader(schema), n: off}, nil
}

func buildWriteParquet(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := checkWriteConfig(ctx, cfg)
	in := ctx.Input()
	var sc *arrow.Schema
	if in != nil {
		var err error
		if sc, err = arrowrow.ArrowSchema(in); err != nil {
			ctx.Errorf(ctx.Pos, "%s cannot write rows %s as Parquet: %v", ctx.Describe(), in, err)
			ok = false
		}
	}
	if !ok {
		return nil, nil
	}
	format := writeFormat{ext: ".parquet", newEncoder: func(w io.Writer, s *schemas.Schema) (fileEncoder, error) {
		if sc == nil {
			return nil, errors.New("the input's schema is not known")
		}
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, err
		}
		return &parquetEncoder{fw: fw, sc: sc, file: s}, nil
	}}
	return newSink(cfg, ctx.Describe(), format, in), nil
}

// parquetEncoder writes rows into a Parquet file, one row group per file (a lane's rows of
// an epoch), buffered until the file is finished.
type parquetEncoder struct {
	fw   *pqarrow.FileWriter
	sc   *arrow.Schema
	file *schemas.Schema // the file's schema: the sink's input
	last *schemas.Schema // the schema conv was made for
	conv *arrowrow.Converter
}

func (e *parquetEncoder) encode(b *schemas.Batch, s *schemas.Schema) error {
	if s != e.last {
		idx := fieldIndex(e.file, s)
		conv, err := arrowrow.NewConverter(e.sc, func(name string) func(schemas.Row) any {
			for i, f := range e.file.Fields {
				if j := idx[i]; f.Name == name && j >= 0 {
					return func(r schemas.Row) any { return r[j] }
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		e.conv, e.last = conv, s
	}
	rec, err := e.conv.Record(b.Rows, b.Pos)
	if err != nil {
		return err
	}
	defer rec.Release()
	return e.fw.WriteBuffered(rec)
}

func (e *parquetEncoder) finish() error { return e.fw.Close() }
