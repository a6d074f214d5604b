package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/parquetrow"
)

// The rows of an unpartitioned table are written straight into Parquet data files, column by
// column (schemas/parquetrow), without Arrow records and iceberg-go's writer around pqarrow:
// kafka-iceberg takes 1.17x less CPU (BENCHMARKS.md, "Target 3"). The files are iceberg-go's
// in all that a reader sees: the Parquet schema pqarrow derives from the table's Arrow schema
// (field ids included), the table's write.parquet.* sizes and codec, and the data file's
// metrics computed by iceberg-go from the footer (table.DataFileFromMetadata, honouring the
// table's metrics modes). Partitioned tables whose spec parquetpart.go covers take it too.
// Tables this path does not cover keep iceberg-go's writer: other partition specs, sorted tables, format v3 (row lineage), nested or decimal columns, and
// Parquet options sluice does not read (bloom filters, per-column dictionaries, ...).

// rowFileSpec is how a table's files are written by the direct path.
type rowFileSpec struct {
	tbl           *table.Table // the write view (sluice's sizes)
	schema        *arrow.Schema
	get           func(name string) func(schemas.Row) any
	opts          []parquet.WriterProperty // arrow-go's writer properties, as iceberg-go's for the table
	rowGroupBytes int64
	targetBytes   int64
	loc           table.LocationProvider
	part          *partitioner // of a partitioned table
}

// newRowFileSpec returns how rows of tbl (the write view) are written directly, or nil when
// the table needs iceberg-go's writer.
func newRowFileSpec(tbl *table.Table, sc *arrow.Schema, get func(string) func(schemas.Row) any) *rowFileSpec {
	meta := tbl.Metadata()
	var part *partitioner
	if !tbl.Spec().IsUnpartitioned() {
		var ok bool
		if part, ok = newPartitioner(tbl, get); !ok {
			return nil
		}
	}
	if meta.Version() > 2 || tbl.SortOrder().OrderID() != table.UnsortedSortOrderID ||
		tbl.Properties().Get(table.WriteFormatDefaultKey, table.WriteFormatDefaultDefault) != "parquet" {
		return nil
	}
	opts, ok := parquetProps(tbl.Properties(), sc)
	if !ok {
		return nil
	}
	if part != nil { // parquetpart.go: small pages bound the open files' memory
		opts = append(opts, parquet.WithDataPageSize(min(partPageBytes, int64(tbl.Properties().GetInt(table.ParquetPageSizeBytesKey, table.ParquetPageSizeBytesDefault)))))
	}
	if _, err := parquetrow.NewWriter(io.Discard, sc, get, parquet.NewWriterProperties(opts...), 1); err != nil {
		return nil // a column parquetrow does not encode
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil
	}
	p := tbl.Properties()
	return &rowFileSpec{tbl: tbl, schema: sc, get: get, opts: opts, loc: loc, part: part,
		rowGroupBytes: int64(p.GetInt(table.ParquetRowGroupSizeBytesKey, table.ParquetRowGroupSizeBytesDefault)),
		targetBytes:   int64(p.GetInt(targetFileSizeKey, DefaultTargetFileSize))}
}

// The table properties the direct path reads (iceberg-go's names); any other write.parquet.*
// or parquet.* key sends the table to iceberg-go's writer.
var parquetKeys = map[string]bool{
	table.ParquetRowGroupSizeBytesKey: true, table.ParquetRowGroupLimitKey: true, table.ParquetPageSizeBytesKey: true,
	table.ParquetPageRowLimitKey: true, table.ParquetDictSizeBytesKey: true, table.ParquetPageVersionKey: true,
	table.ParquetCompressionKey: true, table.ParquetCompressionLevelKey: true, table.ParquetBloomFilterMaxBytesKey: true,
	"parquet.enable.dictionary": true,
}

var parquetCodecs = map[string]compress.Compression{
	"zstd": compress.Codecs.Zstd, "snappy": compress.Codecs.Snappy, "gzip": compress.Codecs.Gzip,
	"uncompressed": compress.Codecs.Uncompressed, "brotli": compress.Codecs.Brotli, "lz4": compress.Codecs.Lz4,
	"lz4raw": compress.Codecs.Lz4Raw,
}

// parquetProps returns arrow-go's writer properties for the table's properties, as iceberg-go
// sets them for its own files, or false for a table with keys or values it does not cover.
func parquetProps(p iceberg.Properties, sc *arrow.Schema) ([]parquet.WriterProperty, bool) {
	for k, v := range p {
		if (strings.HasPrefix(k, "write.parquet.") || strings.HasPrefix(k, "parquet.")) && !parquetKeys[k] {
			return nil, false
		}
		if parquetKeys[k] && k != table.ParquetPageVersionKey && k != table.ParquetCompressionKey && k != "parquet.enable.dictionary" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || (n <= 0 && k != table.ParquetCompressionLevelKey) {
				return nil, false // iceberg-go's writer reports it
			}
		}
	}
	codec, ok := parquetCodecs[p.Get(table.ParquetCompressionKey, table.ParquetCompressionDefault)]
	version := map[string]parquet.DataPageVersion{"1": parquet.DataPageV1, "2": parquet.DataPageV2}
	pageVersion, okVersion := version[p.Get(table.ParquetPageVersionKey, table.ParquetPageVersionDefault)]
	if !ok || !okVersion {
		return nil, false
	}
	opts := []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(int64(p.GetInt(table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault))),
		parquet.WithDataPageSize(int64(p.GetInt(table.ParquetPageSizeBytesKey, table.ParquetPageSizeBytesDefault))),
		parquet.WithDataPageVersion(pageVersion),
		parquet.WithBatchSize(int64(p.GetInt(table.ParquetPageRowLimitKey, table.ParquetPageRowLimitDefault))),
		parquet.WithDictionaryPageSizeLimit(int64(p.GetInt(table.ParquetDictSizeBytesKey, table.ParquetDictSizeBytesDefault))),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(p.GetInt(table.ParquetCompressionLevelKey, table.ParquetCompressionLevelDefault)),
		parquet.WithDictionaryDefault(p.Get("parquet.enable.dictionary", "true") == "true"),
	}
	for _, f := range sc.Fields() {
		// As iceberg-go (and parquet-mr): a column whose dictionary does not pay falls back to plain.
		opts = append(opts, parquet.WithDictionaryCostFallbackFor(f.Name, true))
	}
	return opts, true
}

// rowFiles are a lane's files of one table between two flushes: the open one and those it
// rolled.
type rowFiles struct {
	spec  *rowFileSpec
	lane  int
	run   string // names the files of the lane's run, as iceberg-go's write UUID
	count int
	fs    iceio.WriteFileIO // the table's, once a file was opened
	open  *rowFile
	files []iceberg.DataFile
	// plain are the columns whose dictionary outgrew its limit in the lane's last file: the
	// next files write them plain from the start instead of building a dictionary each time
	// only to drop it (a lane writes a file per epoch, and a row group tries the dictionary
	// anew). Every redictionary-th file tries them again.
	plain map[string]bool
	// A partition's files (parquetpart.go): where they go and the partition's values.
	loc    table.LocationProvider
	values map[int]any
	// at is where the rows of the last write went: their first row's file and position (an
	// upsert remembers each key's row by it, to delete it by position when superseded).
	at posDelete
}

const redictionary = 16

// props are the writer properties of the lane's next file.
func (f *rowFiles) props() *parquet.WriterProperties {
	opts := f.spec.opts
	if len(f.plain) > 0 && f.count%redictionary != 0 {
		opts = slices.Clone(opts)
		for col := range f.plain {
			opts = append(opts, parquet.WithDictionaryFor(col, false))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// rowFile is an open data file.
type rowFile struct {
	path string
	fs   iceio.WriteFileIO
	out  iceio.FileWriter
	size *countingWriter
	pw   *parquetrow.Writer
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newRowFiles(spec *rowFileSpec, lane int) *rowFiles {
	return &rowFiles{spec: spec, lane: lane, run: uuid.NewString()}
}

// write encodes rows into the open file, opening one first if needed, and rolls it at the
// target size. A row whose value does not fit its column is a *parquetrow.RowError, and then
// none of rows was written.
func (f *rowFiles) write(ctx context.Context, rows []schemas.Row) error {
	if f.open == nil {
		if err := f.start(ctx); err != nil {
			return err
		}
	}
	f.at = posDelete{file: f.open.path, pos: f.open.pw.Rows()}
	if err := f.open.pw.Write(rows); err != nil {
		return err
	}
	if f.open.pw.BytesWritten() >= f.spec.targetBytes {
		return f.close()
	}
	return nil
}

func (f *rowFiles) start(ctx context.Context) error {
	if f.fs == nil {
		fs, err := f.spec.tbl.FS(ctx)
		if err != nil {
			return err
		}
		if f.fs, err = writable(fs); err != nil {
			return err
		}
	}
	wfs := f.fs
	loc := f.spec.loc
	if f.loc != nil {
		loc = f.loc
	}
	path := loc.NewDataLocation(fmt.Sprintf("00000-%d-%s-%05d.parquet", f.lane, f.run, f.count))
	out, err := wfs.Create(path)
	if err != nil {
		return err
	}
	size := &countingWriter{w: out}
	pw, err := parquetrow.NewWriter(size, f.spec.schema, f.spec.get, f.props(), f.spec.rowGroupBytes)
	if err != nil {
		out.Close()
		return err
	}
	f.open = &rowFile{path: path, fs: wfs, out: out, size: size, pw: pw}
	f.count++
	return nil
}

// close ends the open file and adds it, with its metrics, to the files.
func (f *rowFiles) close() error {
	of := f.open
	f.open = nil
	meta, err := of.pw.Close()
	if cerr := of.out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", of.path, err)
	}
	tbl := f.spec.tbl
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: tbl.Schema(), Spec: tbl.Spec(), Format: iceberg.ParquetFile, Metadata: meta, FilePath: of.path,
		FileSize: of.size.n, Content: iceberg.EntryContentData, Properties: tbl.Properties(),
		FormatVersion: tbl.Metadata().Version(), PartitionValues: f.values,
	})
	if err != nil {
		return fmt.Errorf("the metrics of %s: %w", of.path, err)
	}
	if f.plain == nil || (f.count-1)%redictionary == 0 {
		f.plain = parquetrow.PlainColumns(meta)
	} else {
		maps.Copy(f.plain, parquetrow.PlainColumns(meta))
	}
	f.files = append(f.files, df)
	return nil
}

// end closes the open file and returns the files written since the last end.
func (f *rowFiles) end() ([]iceberg.DataFile, error) {
	if f.open != nil && f.open.pw.Rows() > 0 {
		if err := f.close(); err != nil {
			return nil, err
		}
	}
	f.abort() // an open file without rows
	files := f.files
	f.files = nil
	return files, nil
}

// abort drops the open file; its rows are never committed. The files it rolled stay until
// orphan files are removed, as iceberg-go's writer leaves them.
func (f *rowFiles) abort() {
	if f.open == nil {
		return
	}
	_, _ = f.open.pw.Close()
	_ = f.open.out.Close()
	_ = f.open.fs.Remove(f.open.path)
	f.open = nil
}

// errOfRow returns the error of the row at i of rows that parquetrow refused (perr), as the
// Arrow conversion words it, so that both paths report a bad row alike.
func errOfRow(conv *converter, rows []schemas.Row, pos []schemas.Position, perr *parquetrow.RowError) error {
	var p []schemas.Position
	if perr.Index < len(pos) {
		p = pos[perr.Index : perr.Index+1]
	}
	rec, err := conv.Record(rows[perr.Index:perr.Index+1], p)
	if rec != nil {
		rec.Release()
	}
	var re *rowError
	if errors.As(err, &re) {
		re.Index = perr.Index
		return re
	}
	re = &rowError{Index: perr.Index, Err: perr}
	if perr.Index < len(pos) {
		re.Pos = &pos[perr.Index]
	}
	return re
}

// writeRows writes rows of ts into the lane's files of the table. A row that does not fit the
// table is a *rowError, as from the Arrow conversion.
func (w *laneWriter) writeRows(ctx context.Context, ts *tableState, wr *writing, rows []schemas.Row, pos []schemas.Position) error {
	f := w.files[ts]
	if f == nil {
		if w.files == nil {
			w.files = map[*tableState]*rowFiles{}
		}
		f = newRowFiles(wr.direct, w.lane)
		w.files[ts] = f
	}
	if f.spec != wr.direct { // the table's writing changed (its schema): a new file
		if f.open != nil {
			if err := f.close(); err != nil {
				return w.s.writeErr(ts, err)
			}
		}
		f.spec, f.plain = wr.direct, nil
	}
	err := f.write(ctx, rows)
	var perr *parquetrow.RowError
	if errors.As(err, &perr) {
		return errOfRow(wr.conv, rows, pos, perr)
	}
	if err != nil {
		return w.s.writeErr(ts, err)
	}
	return nil
}

// endFiles closes the lane's files at a Flush and returns them as ended runs, for Flush to
// seal alike. The tables' rowFiles stay, with what they learnt about dictionaries.
func (w *laneWriter) endFiles() []endedRun {
	var ended []endedRun
	for ts, f := range w.files {
		if files, err := f.end(); len(files) > 0 || err != nil {
			ended = append(ended, endedRun{ts: ts, files: files, err: err})
		}
	}
	return ended
}

// filesOpen reports whether the lane wrote rows into its files since the last Flush.
func (w *laneWriter) filesOpen() bool {
	for _, f := range w.files {
		if f.open != nil {
			return true
		}
	}
	return false
}

// writable is the table's file system as one sluice can create files in.
func writable(fs iceio.IO) (iceio.WriteFileIO, error) {
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("the table's file system (%T) cannot write files", fs)
	}
	return wfs, nil
}
