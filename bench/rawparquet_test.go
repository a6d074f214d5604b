package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// benchRows decodes n generated records as the raw limits do.
func benchRows(t testing.TB, n int) (*schemas.Schema, []schemas.Row) {
	t.Helper()
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(benchdata.EventSchema), &node); err != nil {
		t.Fatal(err)
	}
	s, err := schemas.ParseJSONSchema(&node)
	if err != nil {
		t.Fatal(err)
	}
	dec := schemas.NewJSONDecoder(s)
	g := benchdata.NewGenerator(1)
	rows := make([]schemas.Row, 0, n)
	base := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).UnixMicro()
	agent, _ := s.Index("userAgent")
	for i := range n {
		row, err := dec.Decode(g.Event(nil, int64(i), base+int64(i)))
		if err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 {
			row[agent] = nil // a null userAgent now and then
		}
		rows = append(rows, row)
	}
	return s, rows
}

// TestRawParquetWritersWriteTheRows reads the file of each raw Parquet writer back with
// pqarrow and finds the rows written, in order: the three rows of the raw limits compare
// writers that write the same data.
func TestRawParquetWritersWriteTheRows(t *testing.T) {
	s, rows := benchRows(t, rawBatch+17)
	for mode, newSink := range rowSinks {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "raw.parquet")
			if err := writeRows(newSink, s, path, rows); err != nil {
				t.Fatal(err)
			}
			i := 0
			err := eachParquetRow(context.Background(), path, func(fs *schemas.Schema, read schemas.Row) {
				got := make(schemas.Row, len(s.Fields)) // parquet-go orders the columns by name
				for c, f := range fs.Fields {
					j, _ := s.Index(f.Name)
					got[j] = read[c]
				}
				if i < len(rows) {
					want, have := string(schemas.AppendJSON(nil, s, rows[i])), string(schemas.AppendJSON(nil, s, got))
					if want != have {
						t.Fatalf("row %d reads\n%s\nwant\n%s", i, have, want)
					}
				}
				i++
			})
			if err != nil {
				t.Fatal(err)
			}
			if i != len(rows) {
				t.Fatalf("read %d rows, want %d", i, len(rows))
			}
		})
	}
}

// BenchmarkRawParquet writes the same rows with each writer (go test ./bench -bench
// RawParquet -cpuprofile ...), for profiling without a broker.
func BenchmarkRawParquet(b *testing.B) {
	s, rows := benchRows(b, 20_000)
	for _, mode := range []string{rawParquet, rawParquetGo, rawParquetRow} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(rows)) * benchdata.RecordSize)
			var size int64
			for range b.N {
				path := filepath.Join(b.TempDir(), "raw.parquet")
				if err := writeRows(rowSinks[mode], s, path, rows); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size = st.Size()
			}
			b.ReportMetric(float64(size)/float64(len(rows)*benchdata.RecordSize), "file/input")
		})
	}
}

// writeRows writes rows into a file at path by the writer newSink makes.
func writeRows(newSink func(*schemas.Schema, string) (rowSink, error), s *schemas.Schema, path string, rows []schemas.Row) error {
	w, err := newSink(s, path)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := w.add(row); err != nil {
			return err
		}
	}
	return w.close()
}
