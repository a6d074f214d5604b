package iceberg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
)

// Catalog is a one-off handle on an Iceberg catalog for `sluice iceberg compact|expire` and
// `sluice status`: the catalog of a WriteToIceberg sink (CatalogOf), or one given by its
// properties (NewCatalog), with the sink's defaults (docs/iceberg.md, Catalogs).
type Catalog struct {
	cfg *WriteConfig
}

// compactDefaults returns the sink's compaction key for a catalog of CatalogOf, to fill what
// Compact's caller leaves at zero.
func (c *Catalog) compactDefaults(targetMB float64, minFiles int) *CompactionConfig {
	out := &CompactionConfig{TargetFileSizeMB: targetMB, MinInputFiles: minFiles}
	if d := c.cfg.Compaction; d != nil {
		if out.TargetFileSizeMB == 0 {
			out.TargetFileSizeMB = d.TargetFileSizeMB
		}
		if out.MinInputFiles == 0 {
			out.MinInputFiles = d.MinInputFiles
		}
	}
	return out
}

// CatalogOf returns the catalog a WriteToIceberg sink writes to and the sink's table (or
// routing pattern); ok is false for any other sink.
func CatalogOf(s component.Sink) (c *Catalog, tableName string, ok bool) {
	snk, ok := s.(*sink)
	if !ok {
		return nil, "", false
	}
	return &Catalog{cfg: snk.cfg}, snk.cfg.Table, true
}

// NewCatalog returns the catalog of these catalog_properties and catalog_name, as
// WriteToIceberg takes them (nil properties: the local default, ./warehouse).
func NewCatalog(name string, props map[string]string) (*Catalog, error) {
	cfg := &WriteConfig{CatalogName: name, CatalogProperties: props}
	if _, err := catalogProps(cfg); err != nil {
		return nil, err
	}
	return &Catalog{cfg: cfg}, nil
}

// withTable opens the catalog, loads tableName and calls fn with both.
func (c *Catalog) withTable(ctx context.Context, tableName string, fn func(cat catalog.Catalog, tbl *table.Table) error) error {
	ident, err := identifier(tableName)
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, c.cfg)
	if err != nil {
		return err
	}
	defer closeCatalog(cat)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("load table %s: %w", tableName, err)
	}
	return fn(cat, tbl)
}

// Compact runs one compaction of the table now, as the compaction key does between commits
// (target in MiB and minFiles; 0: the sink's compaction key's, for a catalog of CatalogOf,
// else the table's write.target-file-size-bytes and 5). Pipelines that
// write the table meanwhile are not stopped: the compaction commits on the table as it is,
// pinned to its current snapshot, and is retried or abandoned as the sink's is.
func (c *Catalog) Compact(ctx context.Context, tableName string, targetMB float64, minFiles int) (CompactionStats, error) {
	var stats CompactionStats
	err := c.withTable(ctx, tableName, func(cat catalog.Catalog, tbl *table.Table) error {
		set := c.compactDefaults(targetMB, minFiles).settings()
		rw, err := planRewrite(ctx, tbl, cat, set)
		if err != nil {
			if rw != nil {
				err = errors.Join(err, rw.discard(context.Background(), tbl))
			}
			return err
		}
		if rw == nil {
			return nil
		}
		load := func(ctx context.Context) (*table.Table, error) { return cat.LoadTable(ctx, tbl.Identifier()) }
		if _, err := commitRewrite(ctx, rw, tbl, load, nil); err != nil {
			return err
		}
		stats = rw.stats
		return nil
	})
	if err != nil {
		return stats, fmt.Errorf("compact table %s: %w", tableName, err)
	}
	return stats, nil
}

// ExpireStats says what Expire did.
type ExpireStats struct {
	Before, After int // snapshots
}

// Expire expires the table's snapshots older than age, keeping the newest snapshot of every
// pipeline that committed to it (and the newest that marks a routed epoch complete) and every
// snapshot after them, so that each pipeline still finds its checkpoint.
func (c *Catalog) Expire(ctx context.Context, tableName string, age time.Duration) (ExpireStats, error) {
	var stats ExpireStats
	err := c.withTable(ctx, tableName, func(_ catalog.Catalog, tbl *table.Table) error {
		meta := tbl.Metadata()
		stats.Before, stats.After = len(meta.Snapshots()), len(meta.Snapshots())
		cur := meta.CurrentSnapshot()
		if cur == nil {
			return nil
		}
		keep, seen := 1, map[string]bool{}
		for i, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
			if snap.Summary == nil || snap.Summary.Properties[keyPipeline] == "" {
				continue
			}
			p := snap.Summary.Properties
			keys := []string{p[keyPipeline]}
			if p[keyComplete] == "true" {
				keys = append(keys, p[keyPipeline]+" complete")
			}
			for _, key := range keys {
				if !seen[key] {
					seen[key], keep = true, i+1
				}
			}
		}
		next, err := expireKeeping(ctx, tbl, age, keep)
		if err != nil {
			return err
		}
		stats.After = len(next.Metadata().Snapshots())
		return nil
	})
	if err != nil {
		return stats, fmt.Errorf("expire snapshots of table %s: %w", tableName, err)
	}
	return stats, nil
}

// TableStats is what `sluice status` shows of a table.
type TableStats struct {
	Name        string
	Rows        int64
	DataFiles   int
	DeleteFiles int
	DataBytes   int64
	// LastCompaction is the newest compaction (replace snapshot) in the table's history.
	LastCompaction *CompactionStats
	CompactedAt    time.Time
}

// Stats reads the current snapshot of tableName. A table that does not exist has zero stats.
func (c *Catalog) Stats(ctx context.Context, tableName string) (TableStats, error) {
	st := TableStats{Name: tableName}
	err := c.withTable(ctx, tableName, func(_ catalog.Catalog, tbl *table.Table) error {
		t, err := describeTable(ctx, tbl)
		if err != nil {
			return err
		}
		st.Rows, st.DataFiles, st.DeleteFiles, st.DataBytes = t.rows, len(t.files), int(t.deletes), t.bytes
		if snap := lastCompaction(tbl.Metadata()); snap != nil {
			cs := compactionStatsOf(snap)
			st.LastCompaction, st.CompactedAt = &cs, time.UnixMilli(snap.TimestampMs)
		}
		return nil
	})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return st, nil
	}
	return st, err
}

// SinkTableStats returns the stats of the tables a WriteToIceberg sink writes: its table, or
// with routing the tables holding commits of pipeline. ok is false for any other sink.
func SinkTableStats(ctx context.Context, s component.Sink, pipeline string) (_ []TableStats, ok bool, _ error) {
	snk, ok := s.(*sink)
	if !ok {
		return nil, false, nil
	}
	c := &Catalog{cfg: snk.cfg}
	names := []string{snk.cfg.Table}
	if snk.plan.route != nil {
		cat, err := openCatalog(ctx, snk.cfg)
		if err != nil {
			return nil, true, err
		}
		tables, err := snk.routedTables(ctx, cat, pipeline, "") // the tables only: no copy reads its record here
		_ = closeCatalog(cat)
		if err != nil {
			return nil, true, err
		}
		names = names[:0]
		for _, rt := range tables {
			names = append(names, rt.name)
		}
	}
	var out []TableStats
	for _, name := range names {
		st, err := c.Stats(ctx, name)
		if err != nil {
			return out, true, err
		}
		out = append(out, st)
	}
	return out, true, nil
}
