package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
)

// CompactionConfig is WriteToIceberg's `compaction` key: while the pipeline streams, the sink
// rewrites a partition's small data files (with the deletes that apply to them) into files of
// the target size (docs/iceberg.md, Compaction).
type CompactionConfig struct {
	TargetFileSizeMB float64            `yaml:"target_file_size_mb" doc:"The size of the files a compaction writes, in MiB (default: the table's write.target-file-size-bytes, 128 MiB for tables sluice creates). Files below three quarters of it are rewritten."`
	MinInputFiles    int                `yaml:"min_input_files" doc:"Rewrite a partition's small files only when there are at least this many of them (default 5)."`
	Every            component.Duration `yaml:"every" doc:"Start a compaction at most this often (default 1m; a duration)."`
	EveryCommits     int                `yaml:"every_commits" doc:"Or after this many commits, whichever comes first (default: only every)."`
}

// Defaults of the compaction key.
const (
	defaultMinInputFiles   = 5
	defaultCompactionEvery = time.Minute
	// compactAttempts bounds the catalog commits of one compaction: a conflict with another
	// writer is retried on the fresh table this many times in all, then the round is abandoned
	// (its files removed) and the next round plans again.
	compactAttempts = 3
)

// Summary keys of a compaction snapshot, besides the sluice.* keys it carries forward.
const (
	keyCompaction = "sluice.compaction" // JSON compactionStats of the rewrite
)

// compactSettings are the resolved knobs of one compaction.
type compactSettings struct {
	target   int64 // bytes; 0: the table's write.target-file-size-bytes
	minFiles int
}

func (c *CompactionConfig) settings() compactSettings {
	set := compactSettings{target: int64(c.TargetFileSizeMB * (1 << 20)), minFiles: c.MinInputFiles}
	if set.minFiles <= 0 {
		set.minFiles = defaultMinInputFiles
	}
	return set
}

// targetFor returns the compaction's target file size on tbl.
func (c compactSettings) targetFor(tbl *table.Table) int64 {
	if c.target > 0 {
		return c.target
	}
	return int64(tbl.Properties().GetInt(targetFileSizeKey, DefaultTargetFileSize))
}

// CompactionStats says what one compaction did (the JSON of its snapshot's sluice.compaction
// key, and what `sluice iceberg compact` prints).
type CompactionStats struct {
	ID                 string `json:"id"`
	Groups             int    `json:"groups"`
	DataFilesBefore    int    `json:"data_files_rewritten"`
	BytesBefore        int64  `json:"bytes_rewritten"`
	DataFilesAfter     int    `json:"data_files_written"`
	BytesAfter         int64  `json:"bytes_written"`
	DeleteFilesRemoved int    `json:"delete_files_removed"`
	// SnapshotID is the compaction's snapshot (0 when nothing was committed).
	SnapshotID int64 `json:"snapshot_id,omitempty"`
}

func (c CompactionStats) String() string {
	if c.Groups == 0 {
		return "nothing to compact"
	}
	return fmt.Sprintf("rewrote %d data %s (%s) into %d (%s) in %d %s, removed %d delete %s",
		c.DataFilesBefore, plural(c.DataFilesBefore, "file"), formatBytes(c.BytesBefore),
		c.DataFilesAfter, formatBytes(c.BytesAfter), c.Groups, plural(c.Groups, "group"),
		c.DeleteFilesRemoved, plural(c.DeleteFilesRemoved, "file"))
}

// rewrite is a compaction whose new files are written and not yet committed.
type rewrite struct {
	base    *table.Snapshot // the snapshot it was planned on and read from
	results []table.CompactionGroupResult
	dead    []iceberg.DataFile // delete files no surviving data file needs after the rewrite
	stats   CompactionStats
}

// errAbandon marks a rewrite that cannot be committed on the table as it is now; its files
// are removed and the next round plans again.
var errAbandon = errors.New("compaction abandoned")

// planRewrite plans a compaction of tbl's current snapshot and writes its new files: per
// partition, the data files below three quarters of the target (or with five or more delete
// files applying to them), bin-packed to the target when a bin holds at least minFiles, read
// through iceberg-go's scan so that deletes apply. It commits nothing. nil: nothing to do.
func planRewrite(ctx context.Context, tbl *table.Table, cat table.CatalogIO, set compactSettings) (*rewrite, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	target := set.targetFor(tbl)
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	// min_input_files counts a partition's small files, as Iceberg's rewrite does, not the
	// files of one target-size bin (iceberg-go's planner): 220 KiB files would never fill a
	// 1 MiB bin with five. The partitions with fewer are dropped below.
	cfg.MinInputFiles = 1
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("planning the compaction: %w", err)
	}
	plan, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return nil, err
	}
	groups := worthRewriting(plan.Groups, set.minFiles)
	if len(groups) == 0 {
		return nil, nil
	}
	view, err := sizedView(tbl, cat, target)
	if err != nil {
		return nil, err
	}
	rw := &rewrite{base: snap, stats: CompactionStats{ID: uuid.NewString()}}
	rewritten := map[string]struct{}{}
	for _, g := range groups {
		// One reader: the compaction shares the machine with the pipeline's lanes.
		gr, err := table.ExecuteCompactionGroup(ctx, view, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes},
			table.WithCompactionTargetFileSize(target), table.WithCompactionScanConcurrency(1))
		rw.results = append(rw.results, gr) // its files are removed if anything fails
		if err != nil {
			return rw, fmt.Errorf("rewriting the files of partition %q: %w", g.PartitionKey, err)
		}
		for _, df := range gr.OldDataFiles {
			rewritten[df.FilePath()] = struct{}{}
		}
		rw.stats.Groups++
		rw.stats.DataFilesBefore += len(gr.OldDataFiles)
		rw.stats.BytesBefore += gr.BytesBefore
		rw.stats.DataFilesAfter += len(gr.NewDataFiles)
		rw.stats.BytesAfter += gr.BytesAfter
	}
	if rw.dead, err = deadDeletes(ctx, tbl, snap, rewritten, rw.results); err != nil {
		return rw, err
	}
	rw.stats.DeleteFilesRemoved = len(rw.dead)
	for _, gr := range rw.results {
		rw.stats.DeleteFilesRemoved += len(gr.SafePosDeletes) + len(gr.SafeDeletionVectors)
	}
	return rw, nil
}

// worthRewriting keeps the bins of partitions with at least minFiles small files, but not a
// bin of one file without deletes (rewriting it alone gains nothing).
func worthRewriting(groups []compaction.Group, minFiles int) []compaction.Group {
	perPartition := map[string]int{}
	for _, g := range groups {
		perPartition[g.PartitionKey] += len(g.Tasks)
	}
	var out []compaction.Group
	for _, g := range groups {
		if perPartition[g.PartitionKey] >= minFiles && (len(g.Tasks) > 1 || g.DeleteFileCount > 0) {
			out = append(out, g)
		}
	}
	return out
}

// deadDeletes returns the delete files of snap that no data file needs once the rewritten
// files are gone, besides those the groups already remove: equality deletes older than every
// surviving data file of their partition, and position deletes of rewritten files only.
func deadDeletes(ctx context.Context, tbl *table.Table, snap *table.Snapshot, rewritten map[string]struct{}, results []table.CompactionGroupResult) ([]iceberg.DataFile, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	eq, err := compaction.CollectDeadEqualityDeletesWithSpecs(ctx, fsys, tbl.Metadata(), snap, rewritten)
	if err != nil {
		return nil, fmt.Errorf("finding the equality deletes the compaction makes obsolete: %w", err)
	}
	pos, err := table.CollectDeadPositionDeletes(ctx, fsys, snap, rewritten)
	if err != nil {
		return nil, fmt.Errorf("finding the position deletes the compaction makes obsolete: %w", err)
	}
	staged := map[string]bool{}
	for _, gr := range results {
		for _, df := range append(gr.SafePosDeletes, gr.SafeDeletionVectors...) {
			staged[df.FilePath()] = true
		}
	}
	var out []iceberg.DataFile
	for _, df := range append(eq, pos...) {
		if !staged[df.FilePath()] {
			staged[df.FilePath()] = true
			out = append(out, df)
		}
	}
	return out, nil
}

// sizedView returns tbl with target as its file size and sluice's row group, page and
// dictionary sizes for it (writeView), for the compaction's writer.
func sizedView(tbl *table.Table, cat table.CatalogIO, target int64) (*table.Table, error) {
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err == nil {
		err = b.SetProperties(iceberg.Properties{targetFileSizeKey: strconv.FormatInt(target, 10)})
	}
	var meta table.Metadata
	if err == nil {
		meta, err = b.Build()
	}
	if err != nil {
		return nil, fmt.Errorf("sizing the compaction's files: %w", err)
	}
	return writeView(table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, cat), cat)
}

// commitOn stages the rewrite on tbl, the table as it is now, pinned to its current snapshot,
// and commits it. The new files take the data sequence number of the snapshot they were read
// from, so that equality deletes committed since (upserts) still apply to their rows; a
// snapshot since that removed data files or added position deletes could make the rewrite
// wrong, and abandons it. The summary carries the newest sluice checkpoint forward.
func (rw *rewrite) commitOn(ctx context.Context, tbl *table.Table, hook func(string) error) (*table.Table, error) {
	if err := changedSince(tbl.Metadata(), rw.base); err != nil {
		return nil, err
	}
	props, err := rw.props(tbl.Metadata())
	if err != nil {
		return nil, err
	}
	txn := tbl.NewTransaction()
	if err := txn.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, err
	}
	rf := txn.NewRewrite(props).DataSequenceNumber(rw.base.SequenceNumber)
	for _, gr := range rw.results {
		rf.ApplyResult(gr)
	}
	for _, df := range rw.dead {
		rf.DeleteFile(df)
	}
	if err := rf.Commit(ctx); err != nil {
		// The files to replace are gone (another compaction) or the table refuses them.
		return nil, fmt.Errorf("%w: %w", errAbandon, err)
	}
	if hook != nil {
		if err := hook(stepCompactBefore); err != nil {
			return nil, fmt.Errorf("%w: %w", errHook, err)
		}
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		return nil, err
	}
	if hook != nil {
		if err := hook(stepCompactSent); err != nil {
			return nil, fmt.Errorf("%w: %w", errHook, err)
		}
	}
	rw.stats.SnapshotID = next.CurrentSnapshot().SnapshotID
	return next, nil
}

// The steps of a compaction at which the test hook is called.
const (
	stepCompactBefore = "compact-before" // the new files are written and staged; nothing is sent
	stepCompactSent   = "compact-sent"   // the catalog accepted the compaction
)

// changedSince returns errAbandon when a snapshot after base, up to meta's current one,
// removed data files or added position deletes or deletion vectors: the rewrite read its
// files as of base, and its new files would hide those changes. Appends and equality deletes
// (sluice's own commits) are fine. base no longer in the history abandons too.
func changedSince(meta table.Metadata, base *table.Snapshot) error {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return fmt.Errorf("%w: the table has no snapshot", errAbandon)
	}
	for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if snap.SnapshotID == base.SnapshotID {
			return nil
		}
		if snap.Summary == nil {
			continue
		}
		p := snap.Summary.Properties
		count := func(key string) int { n, _ := strconv.Atoi(p[key]); return n }
		// An upsert's position deletes that name only the snapshot's own files (keyOwnPosDeletes)
		// touch none of the files the rewrite read.
		if count("deleted-data-files") > 0 || count("added-delete-files") > count("added-equality-delete-files")+count(keyOwnPosDeletes) {
			return fmt.Errorf("%w: snapshot %d (%s) removed data files or added position deletes since the compaction read the table", errAbandon, snap.SnapshotID, snap.Summary.Operation)
		}
	}
	return fmt.Errorf("%w: snapshot %d it was planned on is no longer in the table's history", errAbandon, base.SnapshotID)
}

// props returns the compaction snapshot's summary: every sluice.* key of the newest snapshot
// of meta's history that carries a pipeline's checkpoint (so that the current snapshot still
// names the offsets, and expiry may drop the older one), and the compaction's own stats.
func (rw *rewrite) props(meta table.Metadata) (iceberg.Properties, error) {
	props := iceberg.Properties{}
	if cur := meta.CurrentSnapshot(); cur != nil {
		for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
			if snap.Summary == nil || snap.Summary.Properties[keyPipeline] == "" {
				continue
			}
			for k, v := range snap.Summary.Properties {
				if strings.HasPrefix(k, "sluice.") && k != keyOwnPosDeletes { // not the commit's own deletes
					props[k] = v
				}
			}
			break
		}
	}
	stats, err := json.Marshal(rw.stats)
	if err != nil {
		return nil, err
	}
	props[keyCompaction] = string(stats)
	return props, nil
}

// committed reports whether meta's history holds this rewrite (a commit whose reply was lost).
func (rw *rewrite) committed(meta table.Metadata) bool {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return false
	}
	for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if snap.SnapshotID == rw.base.SnapshotID {
			return false
		}
		if snap.Summary != nil && strings.Contains(snap.Summary.Properties[keyCompaction], rw.stats.ID) {
			rw.stats.SnapshotID = snap.SnapshotID
			return true
		}
	}
	return false
}

// discard removes the rewrite's new files, which no snapshot references.
func (rw *rewrite) discard(ctx context.Context, tbl *table.Table) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, gr := range rw.results {
		for _, df := range gr.NewDataFiles {
			if err := fsys.Remove(df.FilePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// commitRewrite commits rw, loading the table with load before each attempt after the first
// (tbl is the table to try first). A failed attempt is retried on the fresh table after a
// backoff unless the rewrite no longer fits it; when it is given up, its files are removed
// once the table shows it was not committed (an unknown outcome leaves them: orphan files are
// harmless, missing ones are not).
func commitRewrite(ctx context.Context, rw *rewrite, tbl *table.Table, load func(context.Context) (*table.Table, error), hook func(string) error) (*table.Table, error) {
	var lastErr error
	for attempt := range compactAttempts {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return nil, errors.Join(err, lastErr)
			}
			fresh, err := load(ctx)
			if err != nil {
				lastErr = err
				continue
			}
			tbl = fresh
			if rw.committed(tbl.Metadata()) {
				return tbl, nil
			}
		}
		next, err := rw.commitOn(ctx, tbl, hook)
		if err == nil {
			return next, nil
		}
		lastErr = err
		if errors.Is(err, errHook) {
			return nil, err
		}
		if errors.Is(err, errAbandon) {
			if derr := rw.discard(ctx, tbl); derr != nil {
				return nil, errors.Join(err, derr)
			}
			return nil, err
		}
	}
	if fresh, err := load(ctx); err == nil {
		if rw.committed(fresh.Metadata()) {
			return fresh, nil
		}
		lastErr = errors.Join(lastErr, rw.discard(ctx, fresh))
	}
	return nil, fmt.Errorf("%w after %d attempts: %w", errAbandon, compactAttempts, lastErr)
}

// lastCompaction returns the newest compaction (replace snapshot) in tbl's history, or nil.
func lastCompaction(meta table.Metadata) *table.Snapshot {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if snap.Summary != nil && snap.Summary.Operation == table.OpReplace {
			return &snap
		}
	}
	return nil
}

// compactionStatsOf returns the stats a sluice compaction recorded in snap, or what the
// snapshot summary says of another writer's.
func compactionStatsOf(snap *table.Snapshot) CompactionStats {
	var st CompactionStats
	p := iceberg.Properties{}
	if snap.Summary != nil {
		p = snap.Summary.Properties
	}
	if json.Unmarshal([]byte(p[keyCompaction]), &st) != nil {
		st = CompactionStats{Groups: 1}
		st.DataFilesBefore, _ = strconv.Atoi(p["deleted-data-files"])
		st.DataFilesAfter, _ = strconv.Atoi(p["added-data-files"])
		st.BytesBefore, _ = strconv.ParseInt(p["removed-files-size"], 10, 64)
		st.BytesAfter, _ = strconv.ParseInt(p["added-files-size"], 10, 64)
		st.DeleteFilesRemoved, _ = strconv.Atoi(p["removed-delete-files"])
	}
	st.SnapshotID = snap.SnapshotID
	return st
}

// checkCompaction reports the compaction key's errors at their positions.
func checkCompaction(c *component.Context, cc *CompactionConfig) {
	if cc == nil {
		return
	}
	n := component.MappingValue(c.Config, "compaction")
	at := func(key string) diag.Pos {
		if n != nil {
			if v := component.MappingValue(n, key); v != nil {
				return c.At(v)
			}
			return c.At(n)
		}
		return c.KeyPos("compaction")
	}
	if cc.TargetFileSizeMB < 0 {
		c.Errorf(at("target_file_size_mb"), "compaction.target_file_size_mb must be positive (MiB), not %v", cc.TargetFileSizeMB)
	}
	if cc.MinInputFiles < 0 || cc.MinInputFiles == 1 {
		c.Errorf(at("min_input_files"), "compaction.min_input_files must be 2 or more (rewriting one file alone gains nothing), not %d", cc.MinInputFiles)
	}
	if cc.Every < 0 {
		c.Errorf(at("every"), "compaction.every must be positive")
	}
	if cc.EveryCommits < 0 {
		c.Errorf(at("every_commits"), "compaction.every_commits must be positive, not %d", cc.EveryCommits)
	}
}
