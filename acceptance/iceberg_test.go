package acceptance

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// icebergWarehouse is a SQLite catalog and a local warehouse in a test's directory.
type icebergWarehouse struct{ dir string }

func (w icebergWarehouse) catalogDB() string { return filepath.Join(w.dir, "catalog.db") }
func (w icebergWarehouse) root() string      { return filepath.Join(w.dir, "wh") }

// sink is the WriteToIceberg block of a pipeline writing tableName, plus extra config lines.
func (w icebergWarehouse) sink(tableName, trigger string, extra ...string) string {
	s := fmt.Sprintf(`  sink:
    type: WriteToIceberg
    config:
      table: %s
      triggering_frequency_seconds: %s
      catalog_properties:
        type: sql
        uri: %s
        warehouse: %s
`, tableName, trigger, w.catalogDB(), w.root())
	for _, e := range extra {
		s += "      " + e + "\n"
	}
	return s
}

// kafkaToIceberg is a pipeline ReadFromKafka(topic) -> MapToFields -> sink, where the input
// records are those of produceSteadily.
func kafkaToIceberg(addr, topic, name, delivery, sink string) string {
	return idsChain(addr, topic, "", sink, fmt.Sprintf("  name: %s\n  delivery: %s\n", name, delivery))
}

// catalog opens the warehouse's catalog with a handle of its own: iceberg-go's SQL catalog on
// the SQLite file, independent of the sink's code.
func (w icebergWarehouse) catalog(t *testing.T) catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(context.Background(), "sluice", iceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri":       "file:" + w.catalogDB() + "?_pragma=busy_timeout(10000)",
		"warehouse": "file://" + w.root(),
	})
	if err != nil {
		t.Fatalf("open the catalog: %v", err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

func (w icebergWarehouse) load(t *testing.T, cat catalog.Catalog, tableName string) (*table.Table, error) {
	return cat.LoadTable(context.Background(), strings.Split(tableName, "."))
}

// committedRows returns the table's row count as of its current snapshot (0 before the first
// commit or while the table does not exist).
func (w icebergWarehouse) committedRows(t *testing.T, cat catalog.Catalog, tableName string) int {
	tbl, err := w.load(t, cat, tableName)
	if err != nil || tbl.CurrentSnapshot() == nil || tbl.CurrentSnapshot().Summary == nil {
		return 0
	}
	n := 0
	fmt.Sscan(tbl.CurrentSnapshot().Summary.Properties["total-records"], &n)
	return n
}

// ids scans the table with iceberg-go and counts each id; rows written by sluice (name
// "user-...") must carry doubled = 2 * amount.
func (w icebergWarehouse) ids(t *testing.T, tableName string) map[int64]int {
	t.Helper()
	tbl, err := w.load(t, w.catalog(t), tableName)
	if err != nil {
		t.Fatalf("load %s: %v", tableName, err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", "name", "amount", "doubled")).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", tableName, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 64<<10)
	defer tr.Release()
	seen := map[int64]int{}
	for tr.Next() {
		rec := tr.RecordBatch()
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, names := col("id").(*array.Int64), col("name").(*array.String)
		amounts, doubled := col("amount").(*array.Float64), col("doubled").(*array.Float64)
		for i := range int(rec.NumRows()) {
			if strings.HasPrefix(names.Value(i), "user-") && doubled.Value(i) != 2*amounts.Value(i) {
				t.Fatalf("row id %d: doubled %v, want 2 * %v", ids.Value(i), doubled.Value(i), amounts.Value(i))
			}
			seen[ids.Value(i)]++
		}
	}
	return seen
}
