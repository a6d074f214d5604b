package iceberg

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// scanSource is ReadFromIceberg: it reads the rows of one snapshot of the table, the one
// current at the first start. Its partition number is that snapshot's sequence number and
// a row's offset its index in the snapshot's files sorted by path, so a restart after a
// crash reads the same snapshot in the same order and resumes after what was committed
// (docs/iceberg.md, "Reading").
type scanSource struct {
	tableReader
	source string
}

// Open loads the table and plans the files of the snapshot to read: the one the offsets in
// from were taken in, else the current one.
func (s *scanSource) Open(ctx context.Context, from schemas.Offsets) (err error) {
	if err := s.Close(); err != nil {
		return err
	}
	// A failed Open leaves nothing open (the catalog's connections), whether or not Close follows.
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	cat, tbl, err := s.plan.open(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", s.plan.what, err)
	}
	s.cat, s.offsets = cat, schemas.Offsets{}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	snap, skip, err := s.resume(tbl, from[s.source])
	if err != nil || snap == nil {
		return err
	}
	if snap.SequenceNumber > math.MaxInt32 {
		return fmt.Errorf("%s: table %s: snapshot sequence number %d is beyond what sluice can number partitions with", s.plan.what, s.plan.table, snap.SequenceNumber)
	}
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID), table.WithSelectedFields(s.plan.selected()...), table.WithArrowBatchSize(batchRows))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("%s: plan the scan of table %s: %w", s.plan.what, s.plan.table, err)
	}
	f := newFileScan(scan, tasks, newRowReader(s.plan.read))
	f.source, f.part, f.skip, f.at = s.source, int32(snap.SequenceNumber), skip, time.UnixMilli(snap.TimestampMs).UTC()
	if !slices.ContainsFunc(tasks, hasDeletes) && skip > f.rowCount() {
		return fmt.Errorf("%s: the checkpoint resumes table %s at row %d of snapshot %d, which has %d rows: the snapshot changed since; read into a new sink to start over",
			s.plan.what, s.plan.table, skip, snap.SnapshotID, f.rowCount())
	}
	s.scan = f
	s.offsets.Set(s.source, f.part, skip)
	return nil
}

// resume returns the snapshot to read and the rows of it already delivered.
func (s *scanSource) resume(tbl *table.Table, parts map[int32]int64) (*table.Snapshot, int64, error) {
	if len(parts) == 0 {
		return tbl.CurrentSnapshot(), 0, nil
	}
	if len(parts) > 1 {
		return nil, 0, fmt.Errorf("%s: the checkpoint holds several snapshots of table %s (%v): it was written by another source", s.plan.what, s.plan.table, slices.Sorted(maps.Keys(parts)))
	}
	for seq, skip := range parts {
		if seq == 0 { // a format-version 1 table numbers no snapshots: the current one
			return tbl.CurrentSnapshot(), skip, nil
		}
		for _, snap := range tbl.Metadata().Snapshots() {
			if snap.SequenceNumber == int64(seq) {
				return &snap, skip, nil
			}
		}
		return nil, 0, fmt.Errorf("%s: the checkpoint resumes table %s in its snapshot with sequence number %d, which the table no longer has (expired?); read into a new sink to start over",
			s.plan.what, s.plan.table, seq)
	}
	return nil, 0, nil
}

// Read returns the next rows of the snapshot, or io.EOF after the last.
func (s *scanSource) Read(ctx context.Context) (*schemas.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.scan == nil {
		return nil, io.EOF
	}
	b, err := s.scan.read(s.ctx)
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
		}
		return nil, err
	}
	s.offsets.Set(s.source, s.scan.part, b.Pos[len(b.Pos)-1].Offset+1)
	return b, nil
}

// Identity is what the source's offsets belong to: the table it scans.
func (s *scanSource) Identity() []string { return []string{"iceberg scan " + s.source} }
