package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// laneWriter is one lane's side of the sink. Between two Flushes it feeds the records of each
// unpartitioned table into one run of iceberg-go's record writer (a segment), which rolls its
// Parquet file at the target file size; Flush ends the runs and seals their files for the
// epoch. The records of a partitioned table go to the epoch's run that all lanes share
// (shared.go), ended by the last lane to flush the epoch.
type laneWriter struct {
	s       *sink
	lane    int
	flushed uint64 // the last epoch this lane flushed
	segs    map[*tableState]*segment
	files   map[*tableState]*rowFiles     // tables written without iceberg-go's writer (parquetwrite.go)
	ups     map[*tableState]*changes      // upsert: the newest change per key since the last Flush
	key     []byte                        // upsert: scratch for encoding keys
	ahead   bool                          // records went to shared runs of the epoch after flushed
	fed     map[interface{ abort() }]bool // the shared runs the lane wrote in
	// early are the files of runs the lane ended before Flush, when the table's schema changed
	// mid-epoch (evolve.go): they belong to the epoch being written.
	early map[*tableState][]iceberg.DataFile
	// done is flushed as the other lanes see it: set under sink.mu when the lane's Flush takes
	// the list of tables, so that a table prepared later counts the lane's flush (shared.go).
	done atomic.Uint64
}

// segment is one run of table.WriteRecords fed from a channel.
type segment struct {
	wr     *writing // what it writes with
	in     chan arrow.RecordBatch
	done   chan struct{} // closed when the run has ended; then files and err are set
	cancel context.CancelFunc
	files  []iceberg.DataFile
	err    error
}

// routed is the rows of a batch that go to one table.
type routed struct {
	ts      *tableState
	covered schemas.Offsets           // with routing, the rows ts holds already (tableState.covered)
	parts   map[schemas.Position]bool // with routing, the partitions of rows (offset 0)
	rows    []schemas.Row             // projected (keep, drop, only)
	idx     []int                     // their indexes in the batch
}

// Write converts the rows of b into Arrow records and hands them to the lane's open runs. A
// row that names no table or cannot be converted stops the pipeline at its position.
func (w *laneWriter) Write(ctx context.Context, b *schemas.Batch) error {
	return w.write(ctx, b, nil)
}

// WriteWithErrors is Write for a sink with error_handling: rows that name no table or cannot
// be converted go to the error output through emit.
func (w *laneWriter) WriteWithErrors(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	return w.write(ctx, b, emit)
}

func (w *laneWriter) write(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	if len(b.Rows) == 0 {
		return nil
	}
	errOut := w.s.plan.errOut
	if emit == nil {
		errOut = nil // no way to the error output: a failed row stops the pipeline
	}
	groups, errs, err := w.route(ctx, b, errOut)
	if err != nil {
		return err
	}
	for _, g := range groups {
		dels := &routed{ts: g.ts}
		if w.s.plan.upsert != nil {
			if dels, errs, err = w.splitUpserts(g, b, errOut, errs); err != nil {
				return err
			}
		}
		wr, conv, err := w.s.writingFor(ctx, g.ts, b.Schema)
		if err != nil {
			return err
		}
		// Rows of the sink's own schema go straight into Parquet where the table allows it;
		// rows whose schema changed mid-run (evolve.go) take iceberg-go's writer, and so do
		// upserts into a partitioned table (converted and held to the commit, upsert.go).
		direct := wr.direct != nil && conv == wr.conv && (w.s.plan.upsert == nil || !wr.partitioned())
		if direct && wr.partitioned() {
			if errs, err = w.writeParts(ctx, g, wr, b, errOut, errs); err != nil {
				return err
			}
			continue
		}
		var rec arrow.RecordBatch
		for len(g.rows) > 0 {
			var err error
			if direct {
				err = w.writeRows(ctx, g.ts, wr, g.rows, positions(b, g.idx))
			} else {
				rec, err = conv.Record(g.rows, positions(b, g.idx))
			}
			var re *rowError
			if err != nil && errOut != nil && errors.As(err, &re) {
				// The row goes to the error output; the others are converted again.
				if errs, err = errOut.Add(errs, b, g.idx[re.Index], fmt.Errorf("%s: table %s: %w", w.s.what, g.ts.name, re.Err)); err != nil {
					return err
				}
				g.rows = slices.Delete(g.rows, re.Index, re.Index+1)
				g.idx = slices.Delete(g.idx, re.Index, re.Index+1)
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: table %s: %w", w.s.what, g.ts.name, err)
			}
			if direct {
				break
			}
			if w.s.plan.upsert != nil {
				break // buffered below; the commit writes the rows still newest
			}
			if err := w.send(ctx, g.ts, wr, rec); err != nil {
				return err
			}
			break
		}
		if w.s.plan.upsert != nil {
			var at posDelete // where the direct path wrote g.rows
			if direct && len(g.rows) > 0 {
				at = w.files[g.ts].at
			}
			w.buffer(g, dels, rec, at)
		}
	}
	return errOut.Emit(errs, emit)
}

// route groups the rows of b by table, projected; with routing it drops the rows a table
// already holds (tableState.covered) and sends rows that name no table to errOut.
func (w *laneWriter) route(ctx context.Context, b *schemas.Batch, errOut *component.ErrorOutput) ([]*routed, *schemas.Batch, error) {
	var groups []*routed
	byName := map[string]*routed{}
	var errs *schemas.Batch
	for i, row := range b.Rows {
		name := w.s.cfg.Table
		if r := w.s.plan.route; r != nil {
			var err error
			if name, err = r.tableOf(row); err != nil {
				if errs, err = errOut.Add(errs, b, i, fmt.Errorf("%s: %w", w.s.what, err)); err != nil {
					return nil, nil, err
				}
				continue
			}
		}
		g := byName[name]
		if g == nil {
			ts, err := w.s.tableFor(ctx, name)
			if err != nil {
				return nil, nil, err
			}
			g = &routed{ts: ts, covered: w.s.coveredOf(ts)}
			byName[name] = g
			groups = append(groups, g)
		}
		if i < len(b.Pos) && w.s.plan.route != nil {
			if g.covered.Covers(b.Pos[i]) {
				continue
			}
			if g.parts == nil {
				g.parts = map[schemas.Position]bool{}
			}
			g.parts[schemas.Position{Source: b.Pos[i].Source, Partition: b.Pos[i].Partition}] = true
		}
		g.rows = append(g.rows, w.s.plan.project(row))
		g.idx = append(g.idx, i)
	}
	for _, g := range groups {
		if len(g.parts) > 0 {
			w.s.noteWrote(g.ts, w.flushed+1, g.covered, g.parts)
		}
	}
	return groups, errs, nil
}

// positions returns the positions of the rows at idx of b.
func positions(b *schemas.Batch, idx []int) []schemas.Position {
	if len(b.Pos) != len(b.Rows) {
		return nil
	}
	out := make([]schemas.Position, len(idx))
	for j, i := range idx {
		out[j] = b.Pos[i]
	}
	return out
}

// send hands rec, converted for wr, to the lane's run for ts, starting it if needed, or to the
// shared run of the lane's current epoch when ts is partitioned. A run of an older writing of
// ts (its schema changed) is ended first; its files wait in early for Flush.
func (w *laneWriter) send(ctx context.Context, ts *tableState, wr *writing, rec arrow.RecordBatch) error {
	var seg *segment
	if wr.partitioned() {
		seg = wr.shared.run(w.flushed+1, w.s.flushedLanes, func() *segment { return startSegment(wr, sharedWorkers) })
		w.feeds(&wr.shared)
	} else {
		if w.segs == nil {
			w.segs = map[*tableState]*segment{}
		}
		if seg = w.segs[ts]; seg != nil && seg.wr != wr {
			delete(w.segs, ts)
			if err := seg.end(ctx); err != nil {
				rec.Release()
				return err
			}
			if seg.err != nil {
				rec.Release()
				return w.s.writeErr(ts, seg.err)
			}
			if w.early == nil {
				w.early = map[*tableState][]iceberg.DataFile{}
			}
			w.early[ts] = append(w.early[ts], seg.files...)
			seg = nil
		}
		if seg == nil {
			seg = startSegment(wr, 1)
			w.segs[ts] = seg
		}
	}
	select {
	case seg.in <- rec:
		return nil
	case <-seg.done:
		rec.Release()
		return w.s.writeErr(ts, seg.err)
	case <-ctx.Done():
		rec.Release()
		return ctx.Err()
	}
}

// feeds records that the lane wrote in r's run of its current epoch.
func (w *laneWriter) feeds(r interface{ abort() }) {
	if w.fed == nil {
		w.fed = map[interface{ abort() }]bool{}
	}
	w.ahead, w.fed[r] = true, true
}

// Flush ends the lane's part of epoch: its files are closed and belong to the epoch.
func (w *laneWriter) Flush(ctx context.Context, epoch uint64) error {
	if epoch <= w.flushed {
		if epoch == w.flushed && len(w.segs) == 0 && len(w.early) == 0 && !w.filesOpen() && len(w.ups) == 0 && !w.ahead {
			return nil // a repeated Flush
		}
		return fmt.Errorf("%s: lane %d flushes epoch %d after epoch %d", w.s.what, w.lane, epoch, w.flushed)
	}
	segs, early := w.segs, w.early
	w.segs, w.early = nil, nil
	for ts, ch := range w.ups {
		w.s.sealChanges(ts, epoch, ch)
	}
	w.ups = nil
	for _, seg := range segs {
		close(seg.in)
	}
	ended := w.endFiles()
	for ts, files := range early {
		ended = append(ended, endedRun{ts: ts, files: files})
	}
	for ts, seg := range segs {
		select {
		case <-seg.done:
			ended = append(ended, endedRun{ts, seg.files, seg.err})
		case <-ctx.Done():
			for _, seg := range segs {
				seg.cancel()
			}
			for _, seg := range segs {
				<-seg.done
			}
			return ctx.Err()
		}
	}
	// The shared runs of the partitioned tables (and of the writings a schema change left
	// behind, evolve.go): the last lane to flush the epoch ends them.
	type tableWriting struct {
		ts *tableState
		wr *writing
	}
	w.s.mu.Lock()
	lanes := len(w.s.writers)
	var shared []tableWriting
	for _, ts := range w.s.tables {
		if wr := ts.wr.Load(); wr.partitioned() {
			for _, wr := range append(slices.Clip(ts.retired), wr) {
				shared = append(shared, tableWriting{ts, wr})
			}
		}
	}
	w.done.Store(epoch)
	w.s.mu.Unlock()
	for _, tw := range shared {
		if parts, last := tw.wr.parts.flush(epoch, w.lane, lanes); last && parts != nil {
			files, err := parts.end()
			ended = append(ended, endedRun{tw.ts, files, err})
		}
		seg, last := tw.wr.shared.flush(epoch, w.lane, lanes)
		if !last || seg == nil {
			continue
		}
		if err := seg.end(ctx); err != nil {
			return err
		}
		ended = append(ended, endedRun{tw.ts, seg.files, seg.err})
	}
	var errs []error
	for _, run := range ended {
		if run.err != nil {
			errs = append(errs, w.s.writeErr(run.ts, run.err))
			continue
		}
		for _, df := range run.files {
			w.s.filesWritten.Add(1)
			w.s.bytesWritten.Add(df.FileSizeBytes())
		}
		w.s.seal(run.ts, epoch, run.files)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w.flushed, w.ahead = epoch, false
	return nil
}

// endedRun is the outcome of a run of the record writer that a lane's Flush ended.
type endedRun struct {
	ts    *tableState
	files []iceberg.DataFile
	err   error
}

// flushedLanes returns the lanes whose Flush of epoch took the list of tables already.
func (s *sink) flushedLanes(epoch uint64) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for lane, w := range s.writers {
		if w.done.Load() >= epoch {
			out = append(out, lane)
		}
	}
	return out
}

// abort stops the open runs, the lane's own and the shared ones of the tables; their files
// are never committed.
func (w *laneWriter) abort() {
	for _, seg := range w.segs {
		seg.stop()
	}
	for _, f := range w.files {
		f.abort()
	}
	for r := range w.fed {
		r.abort()
	}
	w.segs, w.files, w.fed, w.ups, w.early = nil, nil, nil, nil, nil
}

// segmentQueue is how many record batches wait for a run of the record writer: the lane's
// channel and iceberg-go's queue of each partition's writer (64 by default, which let a
// lane hold 64 converted batches, tens of MiB, while Parquet encoding lagged).
const segmentQueue = 2

// maxRowGroup bounds the row groups of sluice's files (the table's
// write.parquet.row-group-size-bytes wins): iceberg-go writes a row group in memory until it
// ends, so each open file holds up to this much (docs/operations.md, "Memory"); 32 MiB row
// groups were 48 of a kafka-iceberg run's 180 MiB heap at its largest.
const maxRowGroup = 4 << 20

// startSegment starts a run of the table's record writer over a new channel, with workers
// goroutines splitting a partitioned table's records by partition.
func startSegment(wr *writing, workers int) *segment {
	ctx, cancel := context.WithCancel(context.Background())
	seg := &segment{wr: wr, in: make(chan arrow.RecordBatch, segmentQueue), done: make(chan struct{}), cancel: cancel}
	records := iter.Seq2[arrow.RecordBatch, error](func(yield func(arrow.RecordBatch, error) bool) {
		for rec := range seg.in {
			if !yield(rec, nil) {
				break
			}
		}
	})
	go func() {
		defer cancel()
		for df, err := range table.WriteRecords(ctx, wr.tbl, wr.conv.Schema(), records,
			table.WithMaxWriteWorkers(workers), table.WithRecordBatchBufferSize(segmentQueue)) {
			if err != nil {
				seg.err = err
				break
			}
			seg.files = append(seg.files, df)
		}
		close(seg.done)
		for rec := range seg.in { // after a failure: records sent until Flush or abort
			rec.Release()
		}
	}()
	return seg
}
