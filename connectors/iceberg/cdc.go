package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// A CDC offset packs a snapshot's sequence number and a row's index among the rows the
// snapshot appended: seq<<rowBits | index. Offsets grow along the table's history since
// sequence numbers do, which snapshot ids (random) do not (docs/iceberg.md, "Reading").
const (
	rowBits = 32
	maxRows = 1 << rowBits
)

func cdcOffset(seq, row int64) int64 { return seq<<rowBits | row }

// cdcSource is ReadFromIcebergCDC: it emits the rows each append snapshot added, snapshot by
// snapshot along the table's history, and polls for new snapshots. Other snapshots
// (overwrite, delete, replace) are passed over: a replace rewrites rows already emitted.
type cdcSource struct {
	cfg       *CDCConfig
	source    string
	poll      time.Duration
	stopAtEnd bool
	log       *slog.Logger

	tableReader
	tbl     *table.Table
	next    int64            // the offset of the next row to emit
	endSeq  int64            // the last sequence number to read (math.MaxInt64: none)
	pending []table.Snapshot // snapshots found and not read yet, oldest first
	curSeq  int64            // its sequence number
	done    bool             // the end was reached: io.EOF once pending is empty
	polled  time.Time        // when the table was last loaded
	loading chan loaded      // the load in flight, if any, whose result the next Read takes
}

// loaded is the result of loading the table in the background.
type loaded struct {
	tbl *table.Table
	err error
}

func buildCDC(c *component.Context, cfg *CDCConfig) (component.Source, error) {
	if cfg.PollIntervalSeconds < 0 {
		c.Errorf(c.KeyPos("poll_interval_seconds"), "poll_interval_seconds must be positive")
	}
	if cfg.FromSnapshot != nil && cfg.FromTimestamp != nil {
		c.Errorf(c.Pos, "%s: from_snapshot and from_timestamp exclude each other; use one", c.Describe())
	}
	if cfg.ToSnapshot != nil && cfg.ToTimestamp != nil {
		c.Errorf(c.Pos, "%s: to_snapshot and to_timestamp exclude each other; use one", c.Describe())
	}
	p := planRead(c, common{cfg.Table, cfg.CatalogName, cfg.CatalogProperties, cfg.ConfigProperties, cfg.Keep, cfg.Drop, cfg.Filter, cfg.Schema})
	if p == nil {
		return nil, nil
	}
	poll := time.Duration(cfg.PollIntervalSeconds)
	if poll == 0 {
		poll = time.Duration(DefaultPollInterval)
	}
	return &cdcSource{tableReader: tableReader{plan: p}, cfg: cfg, source: "iceberg-cdc:" + cfg.Table, poll: poll, log: slog.Default()}, nil
}

// StopAtEnd makes the source end at the snapshot that is current when it opens.
func (s *cdcSource) StopAtEnd() { s.stopAtEnd = true }

// Open loads the table (a streaming source waits for a missing one) and decides where to
// start: after the rows of from, else at from_snapshot, from_timestamp or starting_strategy.
func (s *cdcSource) Open(ctx context.Context, from schemas.Offsets) (err error) {
	if err := s.Close(); err != nil {
		return err
	}
	// A failed Open leaves nothing open (the catalog's connections), whether or not Close follows.
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	cat, err := openCatalog(ctx, s.plan.cat)
	if err != nil {
		return fmt.Errorf("%s: %w", s.plan.what, err)
	}
	s.cat, s.offsets, s.pending, s.done = cat, schemas.Offsets{}, nil, false
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.tbl, s.polled, s.loading = nil, time.Time{}, nil
	tbl, err := s.plan.load(ctx, cat)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) && s.cfg.Streaming:
		if !s.stopAtEnd {
			s.log.Info("waiting for the table to be created", "source", s.plan.what, "table", s.plan.table)
		}
	case err != nil:
		return fmt.Errorf("%s: %w", s.plan.what, err)
	}
	next, hasNext := from.Get(s.source, 0)
	if !hasNext {
		next = s.start(tbl)
	} else if err := beyond(tbl, next); err != nil {
		return fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
	}
	end, err := s.end(tbl)
	if err != nil {
		return fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
	}
	s.next, s.endSeq, s.tbl = next, end, tbl
	s.done = tbl == nil && end < 0
	if tbl != nil {
		s.polled = time.Now()
		if err := s.found(tbl); err != nil {
			return err
		}
	}
	s.offsets.Set(s.source, 0, s.next)
	return nil
}

// beyond reports a checkpoint past the table's newest snapshot: the table was dropped and
// created again, or restored, and resuming would skip or repeat rows silently.
func beyond(tbl *table.Table, next int64) error {
	newest := int64(0)
	if tbl != nil && tbl.CurrentSnapshot() != nil {
		newest = tbl.CurrentSnapshot().SequenceNumber
	}
	if tbl == nil || next <= cdcOffset(newest+1, 0) {
		return nil
	}
	return fmt.Errorf("the checkpoint resumes at snapshot sequence number %d, but the table's newest is %d: it was recreated or restored since; read into a new sink to start over", next>>rowBits, newest)
}

// start returns where to start without a checkpoint.
func (s *cdcSource) start(tbl *table.Table) int64 {
	var snaps []table.Snapshot
	var current *table.Snapshot
	if tbl != nil {
		current = tbl.CurrentSnapshot()
		if current != nil {
			snaps = table.AncestorsOf(current.SnapshotID, tbl.Metadata().SnapshotByID)
		}
	}
	after := func() int64 { // after the current snapshot
		if current == nil {
			return 0
		}
		return cdcOffset(current.SequenceNumber+1, 0)
	}
	switch {
	case s.cfg.FromSnapshot != nil:
		for _, snap := range snaps {
			if snap.SnapshotID == *s.cfg.FromSnapshot {
				return cdcOffset(snap.SequenceNumber, 0)
			}
		}
		return math.MaxInt64 // checked by end
	case s.cfg.FromTimestamp != nil:
		first := after()
		for _, snap := range snaps { // newest first
			if snap.TimestampMs >= *s.cfg.FromTimestamp {
				first = cdcOffset(snap.SequenceNumber, 0)
			}
		}
		return first
	case s.cfg.StartingStrategy == "latest" || (s.cfg.StartingStrategy == "" && s.cfg.Streaming):
		return after()
	}
	return 0
}

// end returns the last sequence number to read: to_snapshot's, or, when the source stops at
// the end, the current snapshot's.
func (s *cdcSource) end(tbl *table.Table) (int64, error) {
	end := int64(math.MaxInt64)
	if s.cfg.FromSnapshot != nil && (tbl == nil || tbl.Metadata().SnapshotByID(*s.cfg.FromSnapshot) == nil) {
		return 0, fmt.Errorf("from_snapshot %d is not a snapshot of the table", *s.cfg.FromSnapshot)
	}
	if s.cfg.ToSnapshot != nil {
		var snap *table.Snapshot
		if tbl != nil {
			snap = tbl.Metadata().SnapshotByID(*s.cfg.ToSnapshot)
		}
		if snap == nil {
			return 0, fmt.Errorf("to_snapshot %d is not a snapshot of the table", *s.cfg.ToSnapshot)
		}
		end = snap.SequenceNumber
	}
	if !s.cfg.Streaming || s.stopAtEnd {
		current := int64(-1)
		if tbl != nil && tbl.CurrentSnapshot() != nil {
			current = tbl.CurrentSnapshot().SequenceNumber
		}
		end = min(end, current)
	}
	if tbl != nil && tbl.Metadata().Version() < 2 && tbl.CurrentSnapshot() != nil {
		return 0, errors.New("ReadFromIcebergCDC needs a table of format-version 2 or later: the snapshots of a version 1 table have no sequence numbers to resume by")
	}
	return end, nil
}

// found queues the snapshots of tbl's history that are not read yet and within the bounds,
// oldest first, and notes when the end is reached.
func (s *cdcSource) found(tbl *table.Table) error {
	current := tbl.CurrentSnapshot()
	if current == nil {
		s.done = s.endSeq < 0
		return nil
	}
	if current.SequenceNumber >= math.MaxInt32 {
		return fmt.Errorf("%s: table %s: snapshot sequence number %d is beyond what sluice's offsets can hold", s.plan.what, s.plan.table, current.SequenceNumber)
	}
	from := s.next >> rowBits
	if len(s.pending) > 0 {
		from = s.pending[len(s.pending)-1].SequenceNumber + 1
	} else if s.scan != nil {
		from = s.curSeq + 1
	}
	ancestors := table.AncestorsOf(current.SnapshotID, tbl.Metadata().SnapshotByID)
	slices.Reverse(ancestors)
	for _, snap := range ancestors {
		switch {
		case snap.SequenceNumber < from:
		case snap.SequenceNumber > s.endSeq, s.cfg.ToTimestamp != nil && snap.TimestampMs > *s.cfg.ToTimestamp:
			s.done = true
			return nil
		default:
			s.pending = append(s.pending, snap)
		}
	}
	s.done = s.done || current.SequenceNumber >= s.endSeq ||
		(s.cfg.ToTimestamp != nil && time.Now().UnixMilli() > *s.cfg.ToTimestamp)
	return nil
}

// Read returns the next rows appended, waiting for new snapshots up to the poll interval, or
// until ctx is done; io.EOF once the end is reached.
func (s *cdcSource) Read(ctx context.Context) (*schemas.Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.scan != nil {
			b, err := s.scan.read(s.ctx)
			if err == io.EOF {
				s.scan.close()
				s.scan, s.next = nil, cdcOffset(s.curSeq+1, 0)
				s.offsets.Set(s.source, 0, s.next)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
			}
			s.next = b.Pos[len(b.Pos)-1].Offset + 1
			s.offsets.Set(s.source, 0, s.next)
			return b, nil
		}
		if len(s.pending) > 0 {
			// Planning a snapshot's files runs on the source's context, not on ctx, for the
			// reason refresh gives; it reads that snapshot's manifests only.
			if err := s.begin(s.ctx, s.pending[0]); err != nil {
				return nil, fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
			}
			s.pending = s.pending[1:]
			continue
		}
		if s.done {
			return nil, io.EOF
		}
		if err := s.refresh(ctx); err != nil {
			return nil, err
		}
	}
}

// begin starts reading the rows snapshot snap appended, or passes over it when it is not an
// append.
func (s *cdcSource) begin(ctx context.Context, snap table.Snapshot) error {
	skip := int64(0)
	if s.next>>rowBits == snap.SequenceNumber {
		skip = s.next & (maxRows - 1)
	}
	if snap.Summary == nil || snap.Summary.Operation != table.OpAppend {
		op := "unknown"
		if snap.Summary != nil {
			op = string(snap.Summary.Operation)
		}
		s.log.Debug("passing over a snapshot that appends nothing", "source", s.plan.what, "snapshot", snap.SnapshotID, "operation", op)
		s.next = cdcOffset(snap.SequenceNumber+1, 0)
		s.offsets.Set(s.source, 0, s.next)
		return nil
	}
	tasks, err := s.tbl.NewIncrementalAppendScan().FromSnapshotInclusive(snap.SnapshotID).ToSnapshot(snap.SnapshotID).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan the files of snapshot %d: %w", snap.SnapshotID, err)
	}
	scan := s.tbl.Scan(table.WithSelectedFields(s.plan.selected()...), table.WithArrowBatchSize(batchRows))
	f := newFileScan(scan, tasks, newRowReader(s.plan.read))
	if n := f.rowCount(); n >= maxRows {
		return fmt.Errorf("snapshot %d appended %d rows, more than the %d sluice numbers per snapshot", snap.SnapshotID, n, int64(maxRows))
	}
	f.source, f.base, f.skip, f.at = s.source, cdcOffset(snap.SequenceNumber, 0), skip, time.UnixMilli(snap.TimestampMs).UTC()
	s.scan, s.curSeq = f, snap.SequenceNumber
	return nil
}

// refresh waits for the poll interval since the last load, then loads the table and queues
// its new snapshots. It returns ctx's error when ctx ends first. The load runs on the
// source's own context, not on ctx: the runner cancels a Read whenever an epoch is due, and a
// load slower than the epoch interval (a remote catalog, a busy machine) would otherwise be
// cancelled every time and the source would never see a new snapshot. An interrupted load
// goes on, and the next Read takes its result.
func (s *cdcSource) refresh(ctx context.Context) error {
	if s.loading == nil {
		if wait := time.Until(s.polled.Add(s.poll)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		s.polled = time.Now()
		ch, plan, cat, lctx := make(chan loaded, 1), s.plan, s.cat, s.ctx
		go func() {
			tbl, err := plan.load(lctx, cat)
			ch <- loaded{tbl, err}
		}()
		s.loading = ch
	}
	var r loaded
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r = <-s.loading:
		s.loading = nil
	}
	tbl, err := r.tbl, r.err
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return nil // still waiting for it
	case err != nil:
		return fmt.Errorf("%s: %w", s.plan.what, err)
	}
	if s.tbl == nil { // the table appeared: check the bounds against it
		if _, err := s.end(tbl); err != nil {
			return fmt.Errorf("%s: table %s: %w", s.plan.what, s.plan.table, err)
		}
	}
	s.tbl = tbl
	return s.found(tbl)
}

// Identity is what the source's offsets belong to: the table whose changes it reads.
func (s *cdcSource) Identity() []string { return []string{"iceberg changes " + s.source} }
