package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/sql" // the sql catalog the pipelines use
	"github.com/apache/iceberg-go/table"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	_ "modernc.org/sqlite" // its SQLite driver
)

// readIceberg scans the table's current snapshot with iceberg-go, through a catalog handle
// of its own on the SQLite file (none of sluice's code).
func readIceberg(ctx context.Context, catalogDB, warehouse, name string) (*idCounts, error) {
	cat, err := catalog.Load(ctx, icebergCatalogName, iceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri":       "file:" + catalogDB + "?_pragma=busy_timeout(10000)",
		"warehouse": "file://" + warehouse,
	})
	if err != nil {
		return nil, fmt.Errorf("open the Iceberg catalog %s: %w", catalogDB, err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	tbl, err := cat.LoadTable(ctx, strings.Split(name, "."))
	if err != nil {
		return nil, fmt.Errorf("load the Iceberg table %s: %w", name, err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", "amount", "doubled")).ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan the Iceberg table %s: %w", name, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 64<<10)
	defer tr.Release()
	counts := newIDCounts()
	for tr.Next() {
		rec := tr.RecordBatch()
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, ok1 := col("id").(*array.Int64)
		amounts, ok2 := col("amount").(*array.Float64)
		doubled, ok3 := col("doubled").(*array.Float64)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("scan the Iceberg table %s: unexpected column types %v", name, rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			if ids.IsNull(i) || doubled.IsNull(i) || doubled.Value(i) != 2*amounts.Value(i) {
				counts.addBad(fmt.Sprintf("row %d of a scan batch: id %v amount %v doubled %v", i, ids.Value(i), amounts.Value(i), doubled.Value(i)))
				continue
			}
			counts.ids[ids.Value(i)]++
		}
	}
	return counts, tr.Err()
}

// readBigQuery reads the table's committed rows with the BigQuery client library
// (tabledata.list on the server's REST API).
func readBigQuery(ctx context.Context, bq *bigQuery, name string) (*idCounts, error) {
	cl, err := bigquery.NewClient(ctx, bq.project, option.WithEndpoint(bq.rest+"/bigquery/v2/"), option.WithoutAuthentication())
	if err != nil {
		return nil, fmt.Errorf("BigQuery client: %w", err)
	}
	defer cl.Close()
	it := cl.Dataset(bq.dataset).Table(name).Read(ctx)
	counts := newIDCounts()
	for {
		var row map[string]bigquery.Value
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			return counts, nil
		}
		if err != nil {
			return counts, fmt.Errorf("read the BigQuery table %s: %w", name, err)
		}
		id, ok1 := row["id"].(int64)
		amount, ok2 := row["amount"].(float64)
		doubled, ok3 := row["doubled"].(float64)
		if !ok1 || !ok2 || !ok3 || doubled != 2*amount {
			counts.addBad(fmt.Sprintf("%v", row))
			continue
		}
		counts.ids[id]++
	}
}
