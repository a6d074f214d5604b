package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rawIcebergKafka is the raw limit of iceberg-kafka: the Parquet data files of the table
// kafka-iceberg wrote in the same round, read with pqarrow, every row encoded as JSON by
// sluice's encoder and produced to a topic as WriteToKafka does (uncompressed, acks=all,
// idempotent), with no catalog, snapshot planning or pipeline machinery. It runs after the
// round's scenarios, since it reads what kafka-iceberg wrote.
const rawIcebergKafka = "parquet-read+encode+produce"

// rawIcebergChild reads every Parquet file under dir and produces its rows to topic.
func rawIcebergChild(addr, dir, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no Parquet files under %s (%v): kafka-iceberg must run first", dir, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	var r rawResult
	var produceErr error
	done := func(_ *kgo.Record, err error) {
		if err != nil && produceErr == nil {
			produceErr = err
		}
	}
	var buf []byte // the values of a batch of rows, as a WriteToKafka lane keeps them
	for _, path := range paths {
		if err := eachParquetRow(ctx, path, func(s *schemas.Schema, row schemas.Row) {
			if cap(buf)-len(buf) < 4096 {
				buf = make([]byte, 0, 1<<20)
			}
			start := len(buf)
			buf = schemas.AppendJSON(buf, s, row)
			v := buf[start:len(buf):len(buf)]
			r.Rows++
			r.Bytes += int64(len(v))
			cl.Produce(ctx, &kgo.Record{Value: v}, done)
		}); err != nil {
			return err
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flushing: %w", err)
	}
	if produceErr != nil {
		return fmt.Errorf("producing: %w", produceErr)
	}
	out, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}

// eachParquetRow calls fn with every row of the Parquet file at path, as sluice rows of the
// file's flat schema.
func eachParquetRow(ctx context.Context, path string, fn func(*schemas.Schema, schemas.Row)) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer rr.Release()
	s, values, err := rowSchema(rr.Schema())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	row := make(schemas.Row, len(s.Fields))
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			for c := range row {
				col := rec.Column(c)
				if col.IsNull(i) {
					row[c] = nil
					continue
				}
				row[c] = values[c](col, i)
			}
			fn(s, row)
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// rowSchema returns the sluice schema of a flat Arrow schema, with a function per column that
// reads a row's value.
func rowSchema(as *arrow.Schema) (*schemas.Schema, []func(arrow.Array, int) any, error) {
	s := &schemas.Schema{}
	var values []func(arrow.Array, int) any
	for _, f := range as.Fields() {
		var kind schemas.Kind
		var value func(arrow.Array, int) any
		switch f.Type.ID() {
		case arrow.INT64:
			kind, value = schemas.Int64, func(a arrow.Array, i int) any { return a.(*array.Int64).Value(i) }
		case arrow.FLOAT64:
			kind, value = schemas.Float64, func(a arrow.Array, i int) any { return a.(*array.Float64).Value(i) }
		case arrow.STRING:
			kind, value = schemas.String, func(a arrow.Array, i int) any { return a.(*array.String).Value(i) }
		case arrow.BOOL:
			kind, value = schemas.Bool, func(a arrow.Array, i int) any { return a.(*array.Boolean).Value(i) }
		case arrow.TIMESTAMP:
			unit := f.Type.(*arrow.TimestampType).Unit
			kind, value = schemas.Timestamp, func(a arrow.Array, i int) any { return a.(*array.Timestamp).Value(i).ToTime(unit) }
		default:
			return nil, nil, fmt.Errorf("column %s of type %s is not supported", f.Name, f.Type)
		}
		s.Fields = append(s.Fields, schemas.Field{Name: f.Name, Type: schemas.Type{Kind: kind}, Nullable: f.Nullable})
		values = append(values, value)
	}
	return s, values, nil
}
