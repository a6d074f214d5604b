package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// started is when this process began: commits of the pipeline before it are an earlier run's.
var started = time.Now()

// maxListedFiles bounds the data files the summary lists one by one.
const maxListedFiles = 10

// maxListedTables bounds the routed tables the summary describes.
const maxListedTables = 10

// describe is what the sink says at the end of a run (its Summary): the epoch it committed
// through, whether it resumed from an earlier run, and its tables as they are now: rows, data
// files with their sizes, and the committed offsets (with routing: of the complete epoch).
func (s *sink) describe() string {
	s.mu.Lock()
	pipeline, offsetsFrom := s.pipeline, s.cfg.Table
	if s.plan.route != nil {
		offsetsFrom = s.marked
	}
	var tables []*table.Table
	var last uint64
	var offsets *table.Table
	for _, name := range slices.Sorted(maps.Keys(s.tables)) {
		ts := s.tables[name]
		last = max(last, ts.last)
		if ts.tbl != nil {
			tables = append(tables, ts.tbl)
			if name == offsetsFrom {
				offsets = ts.tbl
			}
		}
	}
	s.mu.Unlock()
	head := fmt.Sprintf("committed through epoch %d to table %s", last, s.cfg.Table)
	if s.plan.route != nil {
		head = fmt.Sprintf("committed through epoch %d to %d %s routed by %s", last, len(tables), plural(len(tables), "table"), s.cfg.Table)
	}
	var before uint64
	resumed := false
	for _, tbl := range tables {
		if e, ok := earlierCommit(tbl.Metadata(), pipeline); ok && e >= before {
			before, resumed = e, true
		}
	}
	if resumed {
		head += fmt.Sprintf(" (resumed after epoch %d of an earlier run; nothing it committed was written again)", before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines := []string{head}
	for i, tbl := range tables {
		if i == maxListedTables {
			lines = append(lines, fmt.Sprintf("    ... and %d more tables", len(tables)-i))
			break
		}
		t, err := describeTable(ctx, tbl)
		if err != nil {
			lines = append(lines, "    "+err.Error())
			continue
		}
		lines = append(lines, t.String())
	}
	if offsets != nil {
		if st, err := latest(offsets.Metadata(), pipeline); err == nil && st != nil {
			lines = append(lines, "    committed offsets: "+showOffsets(st.offsets))
		}
	}
	return strings.Join(lines, "\n")
}

// earlierCommit returns the newest epoch of pipeline committed before this process started.
func earlierCommit(meta table.Metadata, pipeline string) (uint64, bool) {
	var epoch uint64
	found := false
	_ = history(meta, pipeline, func(st stored) bool {
		if snap := meta.SnapshotByID(st.snapshotID); snap != nil && snap.TimestampMs < started.UnixMilli() {
			epoch, found = st.epoch, true
			return false
		}
		return true
	})
	return epoch, found
}

// snapshotFiles is a table's current snapshot: its rows and data files.
type snapshotFiles struct {
	name, location string
	rows, bytes    int64
	files          []listedFile
	// deletes and deleted are the delete files (upserts) and the rows or keys they hold.
	deletes, deleted int64
}

type listedFile struct {
	path        string
	rows, bytes int64
}

// describeTable lists the data files of tbl's current snapshot.
func describeTable(ctx context.Context, tbl *table.Table) (*snapshotFiles, error) {
	t := &snapshotFiles{name: strings.Join(tbl.Identifier(), "."), location: localPath(tbl.Location())}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return t, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.name, err)
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("table %s: reading the manifest list: %w", t.name, err)
	}
	for _, m := range mans {
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("table %s: reading manifest %s: %w", t.name, m.FilePath(), err)
		}
		if m.ManifestContent() != iceberg.ManifestContentData {
			for _, e := range entries {
				t.deletes++
				t.deleted += e.DataFile().Count()
			}
			continue
		}
		for _, e := range entries {
			df := e.DataFile()
			t.files = append(t.files, listedFile{path: localPath(df.FilePath()), rows: df.Count(), bytes: df.FileSizeBytes()})
			t.rows += df.Count()
			t.bytes += df.FileSizeBytes()
		}
	}
	slices.SortFunc(t.files, func(a, b listedFile) int { return cmp.Compare(a.path, b.path) })
	return t, nil
}

// String shows the table as the end of a run prints it, indented under the sink's line.
func (t *snapshotFiles) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "    table %s in %s: %d rows in %d data %s, %s", t.name, t.location, t.rows,
		len(t.files), plural(len(t.files), "file"), formatBytes(t.bytes))
	if t.deletes > 0 {
		fmt.Fprintf(&b, "; %d delete %s of %d keys or positions, which readers apply", t.deletes, plural(int(t.deletes), "file"), t.deleted)
	}
	for i, f := range t.files {
		if i == maxListedFiles {
			fmt.Fprintf(&b, "\n      ... and %d more", len(t.files)-i)
			break
		}
		fmt.Fprintf(&b, "\n      %s  %s, %d rows", strings.TrimPrefix(f.path, t.location+"/"), formatBytes(f.bytes), f.rows)
	}
	return b.String()
}

// localPath shows a file:// location as a path, relative to the working directory when it is
// below it.
func localPath(loc string) string {
	p, ok := strings.CutPrefix(loc, "file://")
	if !ok {
		return loc
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

// showOffsets shows offsets by source, partitions in order: "kafka:orders 0=261 1=226".
func showOffsets(o schemas.Offsets) string {
	var parts []string
	for _, src := range slices.Sorted(maps.Keys(o)) {
		part := src
		for _, p := range slices.Sorted(maps.Keys(o[src])) {
			part += fmt.Sprintf(" %d=%d", p, o[src][p])
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// formatBytes shows a size in B, KiB, MiB or GiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
