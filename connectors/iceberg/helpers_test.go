package iceberg

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

const testFile = "pipeline.yaml"

// testSource is the Position.Source of the rows the tests write: row i is at offset i.
const testSource = "test:in"

// warehouse is a catalog and warehouse in a temporary directory: a SQL catalog on SQLite, or
// with hadoop set a Hadoop (file-system) catalog.
type warehouse struct {
	t      *testing.T
	dir    string
	hadoop bool
}

func newWarehouse(t *testing.T) warehouse {
	return warehouse{t: t, dir: t.TempDir()}
}

func newHadoopWarehouse(t *testing.T) warehouse {
	return warehouse{t: t, dir: t.TempDir(), hadoop: true}
}

// props are the warehouse's catalog_properties.
func (w warehouse) props() map[string]string {
	if w.hadoop {
		return map[string]string{"type": "hadoop", "warehouse": filepath.Join(w.dir, "wh")}
	}
	return map[string]string{"type": "sql", "uri": filepath.Join(w.dir, "catalog.db"), "warehouse": filepath.Join(w.dir, "wh")}
}

// config is the config block of a WriteToIceberg writing table in the warehouse, plus extra
// YAML lines (indented by four spaces).
func (w warehouse) config(tableName string, extra ...string) string {
	s := fmt.Sprintf("type: WriteToIceberg\nconfig:\n  table: %s\n  catalog_properties:\n", tableName)
	for _, k := range slices.Sorted(maps.Keys(w.props())) {
		s += fmt.Sprintf("    %s: %s\n", k, w.props()[k])
	}
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}

// build builds a WriteToIceberg sink for rows of in; it fails t on config errors.
func (w warehouse) build(in *schemas.Schema, tableName string, extra ...string) *sink {
	w.t.Helper()
	b := componenttest.Env{File: testFile}.Build(w.t, "", w.config(tableName, extra...), in)
	if err := b.Err(); err != nil || b.Component == nil {
		w.t.Fatalf("build: %v", err)
	}
	return b.Component.(*sink)
}

// catalog opens a second handle on the warehouse's catalog, as another process would.
func (w warehouse) catalog() catalog.Catalog {
	w.t.Helper()
	cfg := &WriteConfig{CatalogProperties: w.props()}
	cat, err := openCatalog(context.Background(), cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = closeCatalog(cat) })
	return cat
}

func (w warehouse) load(tableName string) *table.Table {
	w.t.Helper()
	ident, _ := identifier(tableName)
	tbl, err := w.catalog().LoadTable(context.Background(), ident)
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl
}

// scan reads the whole table with iceberg-go's scan.
func (w warehouse) scan(tableName string) arrow.Table {
	w.t.Helper()
	tbl := w.load(tableName)
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		w.t.Fatalf("scan %s: %v", tableName, err)
	}
	w.t.Cleanup(at.Release)
	return at
}

// ids returns the values of the int64 column "id" of the table as scanned.
func (w warehouse) ids(tableName string) []int64 {
	w.t.Helper()
	at := w.scan(tableName)
	idx := at.Schema().FieldIndices("id")
	if len(idx) == 0 {
		return nil
	}
	var out []int64
	for _, c := range at.Column(idx[0]).Data().Chunks() {
		out = append(out, c.(*array.Int64).Int64Values()...)
	}
	return out
}

// harness drives a sink as the runner does.
type harness struct {
	t        *testing.T
	pipeline string
	lanes    int
}

func (h harness) info(instance string) component.SinkInfo {
	return component.SinkInfo{Pipeline: h.pipeline, Lanes: h.lanes, Instance: instance}
}

func (h harness) open(s *sink, instance string) *component.Checkpoint {
	h.t.Helper()
	cp, err := s.Open(context.Background(), h.info(instance))
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	return cp
}

// write writes rows made by row for offsets [from, to) of partition p, row i on lane i%lanes.
func (h harness) write(s *sink, sc *schemas.Schema, p int32, from, to int, row func(i int) schemas.Row) {
	h.t.Helper()
	for lane := range h.lanes {
		b := &schemas.Batch{Schema: sc}
		for i := from; i < to; i++ {
			if i%h.lanes != lane {
				continue
			}
			b.Rows = append(b.Rows, row(i))
			b.Pos = append(b.Pos, schemas.Position{Source: testSource, Partition: p, Offset: int64(i)})
		}
		if err := s.Writer(lane).Write(context.Background(), b); err != nil {
			h.t.Fatalf("write: %v", err)
		}
	}
}

func (h harness) flush(s *sink, epoch uint64) {
	h.t.Helper()
	connectortest.Driver{T: h.t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Flush(s, epoch)
}

// idRow is a row of connectortest.Schema.
func idRow(i int) schemas.Row { return schemas.Row{int64(i), fmt.Sprintf("n%d", i)} }

func sorted(xs []int64) []int64 { return slices.Sorted(slices.Values(xs)) }

func seq(from, to int) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

// scanRows returns the id and name columns of a scanned table.
func scanRows(t *testing.T, at arrow.Table) []idName {
	t.Helper()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var out []idName
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		names := rec.Column(rec.Schema().FieldIndices("name")[0]).(*array.String)
		for i := range int(rec.NumRows()) {
			out = append(out, idName{ID: ids.Value(i), Name: names.Value(i)})
		}
	}
	return out
}
