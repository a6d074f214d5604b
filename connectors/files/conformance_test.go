package files

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hamba/avro/v2/ocf"
	"github.com/parquet-go/parquet-go"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// TestSinkConformance runs the sink suite against every writer, reading what is visible
// with the reader of the same format given the writer's path: the round trip is the check.
func TestSinkConformance(t *testing.T) {
	for _, format := range []string{"Json", "Csv", "Avro", "Parquet", "Parquet num_shards: 1"} {
		format, extra, _ := strings.Cut(format, " ")
		if extra != "" {
			extra = "  " + extra + "\n"
		}
		for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
			t.Run(format+strings.TrimSpace(extra)+"/"+string(d), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "out")
				connectortest.TestSink(t, connectortest.SinkTarget{
					Delivery: d,
					New: func(t *testing.T) component.Sink {
						c, _ := mustBuild(t, fmt.Sprintf("type: WriteTo%s\nconfig:\n  path: %q\n%s", format, dir, extra), connectortest.Schema)
						return c.(*sink)
					},
					Visible: func(t *testing.T) []int64 {
						if files, err := listFiles(dir); notExist(err) || len(files) == 0 {
							return nil // nothing committed yet
						}
						_, rows := readRows(t, fmt.Sprintf("type: ReadFrom%s\nconfig:\n  path: %q\n", format, dir))
						ids := make([]int64, len(rows))
						for i, r := range rows {
							ids[i] = r[0].(int64)
						}
						return ids
					},
				})
			})
		}
	}
}

// TestSourceConformance runs the source suite against every reader of records
// {id, name}, the bad ones (ids in bad) of a type that does not decode where the format can
// hold them. The Avro and Parquet files are written by other libraries (hamba/avro's ocf
// encoder, parquet-go), not by sluice's writers.
func TestSourceConformance(t *testing.T) {
	const records = 40
	bad := []int{3, 17, 30}
	dir := t.TempDir()
	var jsonl, csv bytes.Buffer
	csv.WriteString("id,name\n")
	for i := range records {
		if slices.Contains(bad, i) {
			fmt.Fprintf(&jsonl, "{\"id\": \"not a number %d\"}\n", i)
			fmt.Fprintf(&csv, "not a number %d,row\n", i)
		} else {
			fmt.Fprintf(&jsonl, "{\"id\": %d, \"name\": \"row\"}\n", i)
			fmt.Fprintf(&csv, "%d,row\n", i)
		}
	}
	csvSchema := "  schema: {type: object, properties: {id: {type: integer}, name: {type: string}}, required: [id]}\n"
	type idName struct {
		ID   int64  `avro:"id" parquet:"id"`
		Name string `avro:"name" parquet:"name"`
	}
	var good []idName
	for i := range records {
		good = append(good, idName{int64(i), "row"})
	}
	avroPath := filepath.Join(dir, "in.avro")
	writeAvroOCF(t, avroPath, `{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`, good)
	parquetPath := filepath.Join(dir, "in.parquet")
	if err := parquet.WriteFile(parquetPath, good, parquet.MaxRowsPerRowGroup(7)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		typ, path, extra string
		bad              []int
	}{
		{"ReadFromJson", writeFile(t, dir, "in.jsonl", jsonl.String()), csvSchema, bad},
		{"ReadFromCsv", writeFile(t, dir, "in.csv", csv.String()), csvSchema, bad},
		{"ReadFromAvro", avroPath, "", nil},
		{"ReadFromParquet", parquetPath, "", nil},
	} {
		t.Run(tt.typ, func(t *testing.T) {
			connectortest.TestSource(t, connectortest.SourceTarget{Records: records, Bad: tt.bad,
				New: func(t *testing.T, withErrors bool) component.Source {
					src := fmt.Sprintf("type: %s\nconfig:\n  path: %q\n%s", tt.typ, tt.path, tt.extra)
					if withErrors && tt.bad != nil {
						src += "  error_handling:\n    output: " + connectortest.ErrorsTag + "\n"
					}
					c, _ := mustBuild(t, src)
					return c.(component.Source)
				}})
		})
	}
}

// writeAvroOCF writes values as an object container file with hamba/avro's encoder, in
// blocks of 7 records.
func writeAvroOCF[T any](t *testing.T, path, schema string, values []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := ocf.NewEncoder(schema, f, ocf.WithBlockLength(7), ocf.WithCodec(ocf.Snappy))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}
