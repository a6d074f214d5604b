package files

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// rtField is shorthand for the fields of the round-trip schemas.
func rtField(name string, k schemas.Kind, nullable bool) schemas.Field {
	return schemas.Field{Name: name, Type: schemas.Type{Kind: k}, Nullable: nullable}
}

var (
	// flatSchema is what every format holds.
	flatSchema = schemas.New(rtField("id", schemas.Int64, false), rtField("name", schemas.String, true),
		rtField("score", schemas.Float64, true), rtField("ok", schemas.Bool, true))
	// richSchema adds what the binary formats hold beyond CSV.
	richSchema = schemas.New(rtField("id", schemas.Int64, false), rtField("name", schemas.String, true),
		rtField("at", schemas.Timestamp, true), rtField("day", schemas.Date, true), rtField("raw", schemas.Bytes, true),
		schemas.Field{Name: "price", Type: schemas.Type{Kind: schemas.Decimal, Precision: 10, Scale: 2}, Nullable: true},
		schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}, Nullable: true},
		schemas.Field{Name: "owner", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{rtField("first", schemas.String, true), rtField("age", schemas.Int64, true)}}, Nullable: true},
		schemas.Field{Name: "attrs", Type: schemas.Type{Kind: schemas.Map, Elem: &schemas.Type{Kind: schemas.Int64}}, Nullable: true})
)

func flatRow(i int) schemas.Row {
	if i%5 == 4 { // nulls
		return schemas.Row{int64(i), nil, nil, nil}
	}
	return schemas.Row{int64(i), fmt.Sprintf("name, \"%d\"\nsecond line", i), float64(i) + 0.5, i%2 == 0}
}

func richRow(i int) schemas.Row {
	if i%5 == 4 {
		return schemas.Row{int64(i), nil, nil, nil, nil, nil, nil, nil, nil}
	}
	at := time.Date(2024, 3, 1, 12, 0, i, 123456000, time.UTC)
	return schemas.Row{int64(i), fmt.Sprintf("n%d", i), at, time.Date(2024, 3, 1+i, 0, 0, 0, 0, time.UTC), []byte{byte(i), 0, 255},
		big.NewRat(int64(1000+i), 100), []any{"a", fmt.Sprint(i)}, map[string]any{"first": "Ann", "age": int64(30 + i)},
		map[string]any{"k": int64(i)}}
}

// writeOutput writes rows 0..n-1 with the writer described by sinkYAML over 3 lanes and 2
// epochs, as the runner does, and returns the output directory.
func writeOutput(t *testing.T, dir, sinkYAML string, schema *schemas.Schema, row func(int) schemas.Row, n int) {
	t.Helper()
	ctx := context.Background()
	c, _ := mustBuild(t, sinkYAML, schema)
	s := c.(component.Sink)
	const lanes = 3
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "rt", Lanes: lanes}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for epoch := uint64(1); epoch <= 2; epoch++ {
		for l := range lanes {
			b := &schemas.Batch{Schema: schema}
			for i := l; i < n; i += lanes {
				if (i < n/2) == (epoch == 1) {
					b.Rows = append(b.Rows, row(i))
					b.Pos = append(b.Pos, schemas.Position{Source: "file:in", Offset: int64(i)})
				}
			}
			if err := s.Writer(l).Write(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		for l := range lanes {
			if err := s.Writer(l).Flush(ctx, epoch); err != nil {
				t.Fatal(err)
			}
		}
		cp := component.Checkpoint{Pipeline: "rt", Epoch: epoch, Next: schemas.Offsets{}}
		cp.Next.Set("file:in", 0, int64(n))
		if err := s.Commit(ctx, component.Commit{Checkpoint: cp}); err != nil {
			t.Fatal(err)
		}
	}
}

// readRows reads with the reader described by srcYAML and returns its schema and rows.
func readRows(t *testing.T, srcYAML string) (*schemas.Schema, []schemas.Row) {
	t.Helper()
	c, ctx := mustBuild(t, srcYAML)
	out, _, err := readAll(t, c.(component.Source), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ctx.Outputs()[0].Schema, out.Rows(component.Main)
}

// readBack is readRows with the rows as JSON lines, sorted.
func readBack(t *testing.T, srcYAML string) (*schemas.Schema, []string) {
	t.Helper()
	schema, rows := readRows(t, srcYAML)
	return schema, jsonRows(schema, rows)
}

func jsonRows(schema *schemas.Schema, rows []schemas.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(schemas.AppendJSON(nil, schema, r))
	}
	slices.Sort(out)
	return out
}

// TestRoundTrips writes every format with its writer and reads the output back with its
// reader, given the writer's path, the path plus *, and the epochs' files as a glob.
func TestRoundTrips(t *testing.T) {
	const n = 20
	textRow := func(i int) schemas.Row { return schemas.Row{fmt.Sprintf("line %d", i)} }
	for _, tt := range []struct {
		format, extra, readExtra string
		schema                   *schemas.Schema
		row                      func(int) schemas.Row
	}{
		{format: "Text", schema: textSchema, row: textRow},
		{format: "Json", schema: flatSchema, row: flatRow},
		{format: "Csv", schema: flatSchema, row: flatRow},
		{format: "Csv", extra: "  delimiter: ';'\n", readExtra: "  delimiter: ';'\n", schema: flatSchema, row: flatRow},
		{format: "Avro", schema: richSchema, row: richRow},
		{format: "Parquet", schema: richSchema, row: richRow},
		{format: "Parquet", extra: "  num_shards: 1\n", schema: richSchema, row: richRow},
		{format: "Json", extra: "  num_shards: 2\n", schema: flatSchema, row: flatRow},
	} {
		t.Run(tt.format+strings.ReplaceAll(strings.TrimSpace(tt.extra), " ", ""), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			writeOutput(t, dir, fmt.Sprintf("type: WriteTo%s\nconfig:\n  path: %q\n%s", tt.format, dir, tt.extra), tt.schema, tt.row, n)
			// An epoch being written is never read, whatever the spelling of the path.
			writeFile(t, dir, tmpName(9)+"/lane-0.x", "not committed\n")
			want := make([]schemas.Row, n)
			for i := range want {
				want[i] = tt.row(i)
			}
			for _, path := range []string{dir, dir + "*", dir + "/*/*", dir + "/"} {
				schema, got := readBack(t, fmt.Sprintf("type: ReadFrom%s\nconfig:\n  path: %q\n%s", tt.format, path, tt.readExtra))
				if !slices.Equal(got, jsonRows(tt.schema, want)) {
					t.Errorf("%s: read back\n%s\nwant\n%s", path, strings.Join(got, "\n"), strings.Join(jsonRows(tt.schema, want), "\n"))
				}
				if tt.format != "Text" && tt.format != "Json" && !schemaFits(schema, tt.schema) {
					t.Errorf("%s: read schema %s, written %s", path, schema, tt.schema)
				}
			}
			if strings.Contains(tt.extra, "num_shards") {
				files, err := listFiles(dir)
				if err != nil {
					t.Fatal(err)
				}
				if shards := tt.extra[strings.Index(tt.extra, ":")+2 : len(tt.extra)-1]; len(files) != 2*atoi(t, shards) {
					t.Errorf("num_shards %s over 2 epochs wrote %d files: %v", shards, len(files), files)
				}
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// schemaFits reports whether a schema read back has the written one's fields and kinds
// (nullability may widen: CSV's columns are all nullable).
func schemaFits(read, written *schemas.Schema) bool {
	if len(read.Fields) != len(written.Fields) {
		return false
	}
	for i, f := range written.Fields {
		r := read.Fields[i]
		if r.Name != f.Name || !(r.Type.Equal(f.Type)) || (r.Nullable != f.Nullable && !r.Nullable) {
			return false
		}
	}
	return true
}

// TestReadersRefuseMissingInput: a pattern that matches nothing stops the pipeline when the
// schema comes from the files (at validation) or when it does not (at the run's start).
func TestReadersRefuseMissingInput(t *testing.T) {
	pattern := filepath.Join(t.TempDir(), "none*")
	for _, typ := range []string{"ReadFromCsv", "ReadFromAvro", "ReadFromParquet", "ReadFromJson"} {
		b := env.Build(t, "", fmt.Sprintf("type: %s\nconfig:\n  path: %q\n", typ, pattern))
		if err := b.Err(); err == nil || !strings.Contains(err.Error(), "pipeline.yaml:3:9: "+typ+" takes its schema from its files, but no file matches "+pattern) {
			t.Errorf("%s: got %v", typ, err)
		}
	}
	c, _ := mustBuild(t, fmt.Sprintf("type: ReadFromText\nconfig:\n  path: %q\n", pattern))
	if err := c.(component.Source).Open(context.Background(), nil); err == nil || err.Error() != "no file matches "+pattern {
		t.Errorf("ReadFromText: got %v", err)
	}
	// An output directory whose epochs hold no rows is an empty input, not a missing one.
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, fmt.Sprintf("type: WriteToText\nconfig:\n  path: %q\n", dir), textSchema, nil, 0)
	if _, got := readBack(t, fmt.Sprintf("type: ReadFromText\nconfig:\n  path: %q\n", dir)); len(got) != 0 {
		t.Errorf("an empty output read %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Rows that gained a field at their end mid-run (ReadFromKafka's follow_schema_updates) are
// written to CSV with the header's columns only, so that every line lines up with the header.
func TestCSVRowsThatGrew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	grown := schemas.New(append(slices.Clone(flatSchema.Fields), rtField("extra", schemas.String, true))...)
	ctx := context.Background()
	c, _ := mustBuild(t, fmt.Sprintf("type: WriteToCsv\nconfig:\n  path: %q\n", dir), flatSchema)
	s := c.(component.Sink)
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "grown", Lanes: 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for i, b := range []*schemas.Batch{
		{Schema: flatSchema, Rows: []schemas.Row{{int64(1), "a", 1.5, true}}},
		{Schema: grown, Rows: []schemas.Row{{int64(2), "b", 2.5, false, "x"}}},
	} {
		b.Pos = []schemas.Position{{Source: "file:in", Offset: int64(i)}}
		if err := s.Writer(0).Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Writer(0).Flush(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cp := component.Checkpoint{Pipeline: "grown", Epoch: 1, Next: schemas.Offsets{}}
	cp.Next.Set("file:in", 0, 2)
	if err := s.Commit(ctx, component.Commit{Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCommitted(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"id,name,score,ok", "1,a,1.5,true", "2,b,2.5,false"}; !slices.Equal(strs(got), want) {
		t.Errorf("lines %q, want %q", strs(got), want)
	}
}
