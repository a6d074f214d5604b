package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/files"
)

// The quickstart's numbers: the generator is seeded, so every run of it makes the same 2000
// orders, of which 180 have the quantity "two" (dead letters) and 203 a quantity of 0 (dropped).
const (
	quickstartOrders = 2000
	quickstartRows   = 1617
	quickstartDead   = 180
)

// The README's first command: the quickstart runs Kafka -> Iceberg with no services, stops by
// itself, and says what it committed: the table, its rows and files, the offsets. The table,
// read back with iceberg-go, holds the priced orders; the dead letters the malformed ones. A
// second run resumes and adds nothing.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(repoRoot(t), "examples"))); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		cmd := exec.Command(binary, "run", "examples/quickstart.yaml")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("quickstart: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run()
	for _, want := range []string{
		fmt.Sprintf("read %d records", 2*quickstartOrders), fmt.Sprintf("%d records to error outputs", quickstartDead),
		fmt.Sprintf("publish: wrote %d rows", quickstartOrders),
		fmt.Sprintf("orders_table: wrote %d rows; committed through epoch", quickstartRows),
		fmt.Sprintf("table shop.orders in out/quickstart/warehouse/shop.db/orders: %d rows in", quickstartRows),
		"\n      data/", ".parquet  ", "committed offsets: kafka:orders 0=",
		fmt.Sprintf("dead_letters: wrote %d rows", quickstartDead),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out)
		}
	}
	checkQuickstartTable(t, dir)
	dead, err := files.ReadCommitted(filepath.Join(dir, "out/quickstart/dead_letters"))
	if err != nil || len(dead) != quickstartDead {
		t.Fatalf("%d dead letters (%v), want %d", len(dead), err, quickstartDead)
	}
	var d struct {
		Record, Error     string
		Partition, Offset *int64
	}
	if err := json.Unmarshal(dead[0], &d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Record, `"quantity":"two"`) || !strings.Contains(d.Error, `field "quantity"`) || d.Partition == nil || d.Offset == nil {
		t.Errorf("dead letter does not say what failed and where: %s", dead[0])
	}

	again := run()
	for _, want := range []string{"read 0 records", "orders_table: wrote 0 rows", "resumed after epoch",
		fmt.Sprintf("table shop.orders in out/quickstart/warehouse/shop.db/orders: %d rows in", quickstartRows)} {
		if !strings.Contains(again, want) {
			t.Errorf("second run's output lacks %q:\n%s", want, again)
		}
	}
	checkQuickstartTable(t, dir)
	if dead, err := files.ReadCommitted(filepath.Join(dir, "out/quickstart/dead_letters")); err != nil || len(dead) != quickstartDead {
		t.Errorf("%d dead letters after the second run (%v), want %d", len(dead), err, quickstartDead)
	}
}

// checkQuickstartTable reads the quickstart's table with iceberg-go through its own catalog
// handle: every order once, none empty, each priced and tagged with its region.
func checkQuickstartTable(t *testing.T, dir string) {
	t.Helper()
	wh := filepath.Join(dir, "out/quickstart/warehouse")
	cat, err := catalog.Load(context.Background(), "sluice", iceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(wh, "catalog.db") + "?_pragma=busy_timeout(10000)", "warehouse": "file://" + wh,
	})
	if err != nil {
		t.Fatalf("open the catalog: %v", err)
	}
	defer cat.(catalog.Closer).Close()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"shop", "orders"})
	if err != nil {
		t.Fatalf("load shop.orders: %v", err)
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan shop.orders: %v", err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1<<16)
	defer tr.Release()
	ids := map[int64]bool{}
	for tr.Next() {
		rec := tr.RecordBatch()
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		id, qty, price := col("order_id").(*array.Int64), col("quantity").(*array.Int64), col("unit_price").(*array.Float64)
		total, country, region := col("total").(*array.Float64), col("country").(*array.String), col("region").(*array.String)
		for i := range int(rec.NumRows()) {
			eu := country.Value(i) == "DE" || country.Value(i) == "FR"
			if ids[id.Value(i)] || id.Value(i) < 1 || id.Value(i) > quickstartOrders || qty.Value(i) <= 0 ||
				total.Value(i) != float64(qty.Value(i))*price.Value(i) || (region.Value(i) == "EU") != eu {
				t.Fatalf("wrong or repeated row: order %d quantity %d price %v total %v country %s region %s",
					id.Value(i), qty.Value(i), price.Value(i), total.Value(i), country.Value(i), region.Value(i))
			}
			ids[id.Value(i)] = true
		}
	}
	if len(ids) != quickstartRows {
		t.Errorf("the table holds %d orders, want %d", len(ids), quickstartRows)
	}
}

// Every example runs to its end with no services (those that write to BigQuery run in
// kafka_to_bigquery_test.go, against the loopback server).
func TestExamplesRun(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.yaml"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(text), "type: WriteToBigQuery") {
				t.Skip("writes to BigQuery, a service: TestKafkaToBigQueryExample runs it against sluice's loopback server")
			}
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(repoRoot(t), "examples"))); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "run", filepath.Join("examples", filepath.Base(f)), "--for", "30s")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "committed") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}
