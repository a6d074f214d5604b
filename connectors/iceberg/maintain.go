package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// newTableDefaults are the maintenance properties sluice gives the tables it creates, unless
// table_properties sets them: a long-running pipeline commits every few seconds, and without
// them every commit leaves one more metadata file and one more manifest behind for good.
var newTableDefaults = iceberg.Properties{
	table.MetadataDeleteAfterCommitEnabledKey: "true", // keep write.metadata.previous-versions-max (100) old metadata files
	table.ManifestMergeEnabledKey:             "true", // merge manifests once commit.manifest.min-count-to-merge (100) pile up
}

// setNewTableDefaults adds newTableDefaults and the default file size to props where unset.
func setNewTableDefaults(props iceberg.Properties) {
	for k, v := range newTableDefaults {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	if _, ok := props[targetFileSizeKey]; !ok {
		props[targetFileSizeKey] = strconv.Itoa(DefaultTargetFileSize)
	}
}

// maintain runs after a successful commit, under commitMu: with expire_snapshots_older_than
// set, it expires old snapshots, at most every quarter of that age. A failure is logged: the
// epoch is committed, and the next round tries again.
func (s *sink) maintain(ctx context.Context, pipeline string) {
	age := time.Duration(s.cfg.ExpireSnapshotsOlderThan)
	if age <= 0 || time.Now().Before(s.nextExpiry) {
		return
	}
	s.nextExpiry = time.Now().Add(age / 4)
	_, tbl, err := s.state()
	if err == nil {
		err = s.expire(ctx, tbl, pipeline, age)
	}
	if err != nil {
		slog.Warn("expiring old snapshots failed; the next commit tries again", "sink", s.what, "table", s.cfg.Table, "error", err)
	}
}

// expire removes the snapshots of tbl older than age, keeping at least the table's
// history.expire.min-snapshots-to-keep and always the newest snapshot of the pipeline and
// every snapshot after it: Open finds the pipeline's checkpoint by walking back from the
// current snapshot, so the walk must reach it. iceberg-go deletes the files only the expired
// snapshots used (manifest lists, manifests, data files a compaction replaced).
func (s *sink) expire(ctx context.Context, tbl *table.Table, pipeline string, age time.Duration) error {
	meta := tbl.Metadata()
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	depth := -1
	for i, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if snap.Summary != nil && snap.Summary.Properties[keyPipeline] == pipeline {
			depth = i
			break
		}
	}
	if depth < 0 {
		return nil // the checkpoint is not on the main branch's history: expire nothing
	}
	keep := max(meta.Properties().GetInt(table.MinSnapshotsToKeepKey, table.MinSnapshotsToKeepDefault), depth+1)
	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithOlderThan(age), table.WithRetainLast(keep)); err != nil {
		return fmt.Errorf("expire snapshots of table %s: %w", s.cfg.Table, err)
	}
	next, err := txn.Commit(ctx)
	if next != nil {
		s.mu.Lock()
		s.tbl = next
		s.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("expire snapshots of table %s: %w", s.cfg.Table, err)
	}
	return nil
}
