package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"
)

// The raw limits: what the same work costs with no pipeline machinery, each in a process of
// its own (the harness runs its own binary with -raw-child) so that its rusage is its own.
const (
	rawConsume       = "consume"                 // a bare franz-go consumer reading the topic
	rawDecode        = "consume+decode"          // and sluice's JSON decoder (schemas.JSONDecoder) into rows
	rawDecodeChecked = "consume+decode-fastjson" // the same by the decoder's checked path alone (fastjson), Decode before issue 21
	rawParquet       = "consume+decode+parquet"  // and the rows into Parquet through arrow-go's pqarrow, zstd, as iceberg-go writes
)

var rawModes = []string{rawConsume, rawDecodeChecked, rawDecode, rawParquet}

// rawResult is what a raw child reports on stdout.
type rawResult struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// runRaw runs raw limit mode once as a child process and measures it.
func (e *env) runRaw(ctx context.Context, mode string, run int) (measurement, error) {
	self, err := os.Executable()
	if err != nil {
		return measurement{}, fmt.Errorf("finding the harness binary: %w", err)
	}
	if mode == rawIcebergKafka {
		topic := fmt.Sprintf("raw-out-%d-%d", run, time.Now().UnixNano())
		m, r, err := e.measureRaw(ctx, self, mode, run, "-raw-dir", e.warehouse("kafka-iceberg", run), "-raw-topic", topic)
		if err == nil && r.Rows != int64(e.records) {
			m.Check = fmt.Sprintf("produced %d records, want %d", r.Rows, e.records)
		}
		if err == nil {
			err = deleteTopics(ctx, e.addr, topic)
		}
		return m, err
	}
	dir := e.warehouse("raw", run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return measurement{}, fmt.Errorf("%w", err)
	}
	m, r, err := e.measureRaw(ctx, self, mode, run, "-raw-dir", dir)
	if err != nil {
		return m, err
	}
	if r.Rows != int64(e.records) || r.Bytes != e.inputBytes {
		m.Check = fmt.Sprintf("read %d records of %d bytes, want %d of %d", r.Rows, r.Bytes, e.records, e.inputBytes)
	}
	return m, os.RemoveAll(dir)
}

// measureRaw runs the harness binary as the raw child of mode and reads what it reports.
func (e *env) measureRaw(ctx context.Context, self, mode string, run int, args ...string) (measurement, rawResult, error) {
	var r rawResult
	args = append([]string{"-raw-child", mode, "-raw-addr", e.addr, "-records", fmt.Sprint(e.records)}, args...)
	if e.profiles != "" {
		args = append(args, "-raw-cpuprofile", filepath.Join(e.profiles, fmt.Sprintf("raw-%s-%d.prof", mode, run)))
	}
	m, stdout, _, err := measure(ctx, nil, self, args...)
	if err != nil {
		return m, r, err
	}
	if err := json.Unmarshal(stdout, &r); err != nil {
		return m, r, fmt.Errorf("raw %s printed %q: %w", mode, stdout, err)
	}
	m.Rows = r.Rows
	return m, r, nil
}

// rawChild is the child side: it reads the n records of topic bench and does the work of mode.
func rawChild(mode, addr string, n int, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var work func([]byte) error
	var finish func() error
	if mode != rawConsume {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(benchdata.EventSchema), &node); err != nil {
			return fmt.Errorf("the event schema: %w", err)
		}
		s, err := schemas.ParseJSONSchema(&node)
		if err != nil {
			return fmt.Errorf("the event schema: %w", err)
		}
		dec := schemas.NewJSONDecoder(s)
		work = func(v []byte) error {
			_, err := dec.Decode(v)
			return err
		}
		if mode == rawDecodeChecked {
			work = func(v []byte) error {
				_, err := dec.DecodeChecked(v)
				return err
			}
		}
		if mode == rawParquet {
			pw, err := newParquetSink(s, filepath.Join(dir, "raw.parquet"))
			if err != nil {
				return err
			}
			work = func(v []byte) error {
				row, err := dec.Decode(v)
				if err != nil {
					return err
				}
				return pw.add(row)
			}
			finish = pw.close
		} else if mode != rawDecode && mode != rawDecodeChecked {
			return fmt.Errorf("unknown raw mode %q", mode)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()
	var r rawResult
	for r.Rows < int64(n) {
		fs := cl.PollFetches(ctx)
		if err := fetchErr(fs); err != nil {
			return fmt.Errorf("polling: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("after %d records: %w", r.Rows, err)
		}
		var werr error
		fs.EachRecord(func(rec *kgo.Record) {
			r.Rows++
			r.Bytes += int64(len(rec.Value))
			if work != nil && werr == nil {
				werr = work(rec.Value)
			}
		})
		if werr != nil {
			return fmt.Errorf("record %d: %w", r.Rows, werr)
		}
	}
	if finish != nil {
		if err := finish(); err != nil {
			return err
		}
	}
	out, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}

// parquetSink writes rows of a flat schema to one Parquet file through pqarrow.
type parquetSink struct {
	f    *os.File
	fw   *pqarrow.FileWriter
	b    *array.RecordBuilder
	adds []func(array.Builder, any)
	n    int
}

const (
	parquetBatch  = 4096
	rowGroupBytes = 128 << 20 // iceberg-go's write.parquet.row-group-size-bytes
)

func newParquetSink(s *schemas.Schema, path string) (*parquetSink, error) {
	var fields []arrow.Field
	var adds []func(array.Builder, any)
	for _, f := range s.Fields {
		var dt arrow.DataType
		var add func(array.Builder, any)
		switch f.Type.Kind {
		case schemas.Int64:
			dt, add = arrow.PrimitiveTypes.Int64, func(b array.Builder, v any) { b.(*array.Int64Builder).Append(v.(int64)) }
		case schemas.Float64:
			dt, add = arrow.PrimitiveTypes.Float64, func(b array.Builder, v any) { b.(*array.Float64Builder).Append(v.(float64)) }
		case schemas.String:
			dt, add = arrow.BinaryTypes.String, func(b array.Builder, v any) { b.(*array.StringBuilder).Append(v.(string)) }
		case schemas.Bool:
			dt, add = arrow.FixedWidthTypes.Boolean, func(b array.Builder, v any) { b.(*array.BooleanBuilder).Append(v.(bool)) }
		case schemas.Timestamp:
			dt = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
			add = func(b array.Builder, v any) {
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
			}
		default:
			return nil, fmt.Errorf("raw parquet: field %s of type %s is not supported", f.Name, f.Type)
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable})
		adds = append(adds, add)
	}
	sc := arrow.NewSchema(fields, nil)
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	// iceberg-go's defaults (table/internal/parquet_files.go), as WriteToIceberg writes.
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2),
		parquet.WithMaxRowGroupLength(1<<20), parquet.WithDataPageSize(1<<20), parquet.WithBatchSize(20_000),
		parquet.WithDictionaryPageSizeLimit(2<<20))
	fw, err := pqarrow.NewFileWriter(sc, file, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("raw parquet: %w", err)
	}
	return &parquetSink{f: file, fw: fw, b: array.NewRecordBuilder(memory.DefaultAllocator, sc), adds: adds}, nil
}

func (p *parquetSink) add(row schemas.Row) error {
	for i, v := range row {
		if v == nil {
			p.b.Field(i).AppendNull()
			continue
		}
		p.adds[i](p.b.Field(i), v)
	}
	if p.n++; p.n == parquetBatch {
		return p.write()
	}
	return nil
}

func (p *parquetSink) write() error {
	rec := p.b.NewRecordBatch()
	defer rec.Release()
	p.n = 0
	if p.fw.RowGroupTotalBytesWritten() >= rowGroupBytes {
		if err := p.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("raw parquet: %w", err)
		}
	}
	if err := p.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("raw parquet: %w", err)
	}
	return nil
}

func (p *parquetSink) close() error {
	if p.n > 0 {
		if err := p.write(); err != nil {
			return err
		}
	}
	p.b.Release()
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("raw parquet: %w", err)
	}
	return nil // fw.Close closes the file
}
