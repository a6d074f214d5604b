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

// maintain runs after a successful commit of ts, under commitMu: with
// expire_snapshots_older_than set, it expires old snapshots, at most every quarter of that
// age. A failure is logged: the epoch is committed, and the next round tries again.
func (s *sink) maintain(ctx context.Context, ts *tableState, pipeline string) {
	age := time.Duration(s.cfg.ExpireSnapshotsOlderThan)
	if age <= 0 || time.Now().Before(ts.nextExpiry) {
		return
	}
	ts.nextExpiry = time.Now().Add(age / 4)
	_, tbl, err := s.current(ts)
	if err == nil {
		err = s.expire(ctx, ts, tbl, pipeline, age)
	}
	if err != nil {
		slog.Warn("expiring old snapshots failed; the next commit tries again", "sink", s.what, "table", ts.name, "error", err)
	}
}

// expire removes the snapshots of tbl (the table of ts) older than age, keeping at least the
// table's history.expire.min-snapshots-to-keep and always the newest snapshot of the
// pipeline and every snapshot after it: Open finds the pipeline's checkpoint by walking back
// from the current snapshot, so the walk must reach it. With routing, the table carrying the
// newest complete epoch keeps the snapshot that marks it. iceberg-go deletes the files only
// the expired snapshots used (manifest lists, manifests, data files a compaction replaced).
func (s *sink) expire(ctx context.Context, ts *tableState, tbl *table.Table, pipeline string, age time.Duration) error {
	meta := tbl.Metadata()
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	depth := keepDepth(meta, cur.SnapshotID, pipeline, s.plan.route != nil)
	if depth < 0 {
		return nil // the checkpoint is not on the main branch's history: expire nothing
	}
	next, err := expireKeeping(ctx, tbl, age, depth+1)
	if next != nil {
		s.mu.Lock()
		ts.tbl = next
		s.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("expire snapshots of table %s: %w", ts.name, err)
	}
	return nil
}

// expireKeeping expires the snapshots of tbl older than age, keeping at least the newest
// keep of the current snapshot's history and the table's history.expire.min-snapshots-to-keep.
func expireKeeping(ctx context.Context, tbl *table.Table, age time.Duration, keep int) (*table.Table, error) {
	keep = max(tbl.Metadata().Properties().GetInt(table.MinSnapshotsToKeepKey, table.MinSnapshotsToKeepDefault), keep)
	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithOlderThan(age), table.WithRetainLast(keep)); err != nil {
		return nil, err
	}
	return txn.Commit(ctx)
}

// keepDepth returns how many snapshots back from cur the history must reach: to the
// pipeline's newest commit and, with routing, to every copy's newest complete mark in the
// table (a copy's own record is read from its newest mark, wherever it is; a mark that is
// not the copy's newest one anywhere is kept too, which costs a few snapshots). -1 when the
// pipeline has no commit on the main branch.
func keepDepth(meta table.Metadata, cur int64, pipeline string, routed bool) int {
	depth, newest := -1, false
	marked := map[string]bool{}
	for i, snap := range table.AncestorsOf(cur, meta.SnapshotByID) {
		p := snap.Summary
		if p == nil || p.Properties[keyPipeline] != pipeline {
			continue
		}
		if !newest {
			newest, depth = true, i
		}
		if !routed {
			break
		}
		if inst := p.Properties[keyInstance]; p.Properties[keyComplete] == "true" && !marked[inst] {
			marked[inst], depth = true, i
		}
	}
	return depth
}
