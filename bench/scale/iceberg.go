package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/sql" // the sql catalog the pipelines use
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // its sqlite driver
)

// icebergTables are the tables the iceberg sink routes into: db.scale_{bucket}, bucket
// (pipelineYAML) sending 60%, 30%, about 10% and 0.1% of every partition's records to
// scale_0 to scale_3: most epochs commit scale_3 without rows of most partitions, so it
// holds older offsets than the epochs start from.
var icebergTables = []string{"scale_0", "scale_1", "scale_2", "scale_3"}

// icebergSink is WriteToIceberg routed by bucket into a SQL catalog on SQLite in dir,
// committing every epoch.
func icebergSink(dir string, o options) string {
	return fmt.Sprintf(`  sink:
    type: WriteToIceberg
    config:
      table: db.scale_{bucket}
      triggering_frequency_seconds: %s
      catalog_properties:
        type: sql
        uri: %s
        warehouse: %s
`, o.epoch, filepath.Join(dir, "catalog.db"), filepath.Join(dir, "wh"))
}

// icebergCatalog opens the warehouse of dir with a catalog handle of its own.
func icebergCatalog(ctx context.Context, dir string) (catalog.Catalog, error) {
	cat, err := catalog.Load(ctx, "sluice", iceberg.Properties{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		return nil, fmt.Errorf("catalog of %s: %w", dir, err)
	}
	return cat, nil
}

// icebergCommits counts the snapshots committed in [from, to) over the routed tables, and the
// tables that exist.
func icebergCommits(ctx context.Context, dir string, from, to time.Time) (commits, tables int, err error) {
	cat, err := icebergCatalog(ctx, dir)
	if err != nil {
		return 0, 0, err
	}
	for _, name := range icebergTables {
		tbl, err := cat.LoadTable(ctx, []string{"db", name})
		if err != nil {
			continue // not created (yet)
		}
		tables++
		for _, snap := range tbl.Metadata().Snapshots() {
			at := time.UnixMilli(snap.TimestampMs)
			if !at.Before(from) && at.Before(to) {
				commits++
			}
		}
	}
	return commits, tables, nil
}

// icebergIDs scans every table of namespace db with iceberg-go and counts each row's id.
func icebergIDs(ctx context.Context, dir string) (map[int64]int, error) {
	cat, err := icebergCatalog(ctx, dir)
	if err != nil {
		return nil, err
	}
	ids := map[int64]int{}
	for ident, err := range cat.ListTables(ctx, table.Identifier{"db"}) {
		if err != nil {
			return nil, fmt.Errorf("listing the tables: %w", err)
		}
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, fmt.Errorf("table %v: %w", ident, err)
		}
		at, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowTable(ctx)
		if err != nil {
			return nil, fmt.Errorf("scanning %v: %w", ident, err)
		}
		for _, chunk := range at.Column(0).Data().Chunks() {
			for _, id := range chunk.(*array.Int64).Int64Values() {
				ids[id]++
			}
		}
		at.Release()
	}
	return ids, nil
}
