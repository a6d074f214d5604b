package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// laneWriter is one lane's side of the sink. Between two Flushes it feeds the records of each
// table into one run of iceberg-go's record writer (a segment), which keeps one open Parquet
// file per table partition and rolls it at the target file size; Flush ends the runs and
// seals their files for the epoch.
type laneWriter struct {
	s       *sink
	lane    int
	flushed uint64 // the last epoch this lane flushed
	segs    map[*tableState]*segment
	ups     map[*tableState]changes // upsert: the newest change per key since the last Flush
}

// segment is one run of table.WriteRecords fed from a channel.
type segment struct {
	in     chan arrow.RecordBatch
	done   chan struct{} // closed when the run has ended; then files and err are set
	cancel context.CancelFunc
	files  []iceberg.DataFile
	err    error
}

// routed is the rows of a batch that go to one table.
type routed struct {
	ts   *tableState
	rows []schemas.Row // projected (keep, drop, only)
	idx  []int         // their indexes in the batch
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
		for len(g.rows) > 0 {
			rec, err := g.ts.wr.conv.Record(g.rows, positions(b, g.idx))
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
			if w.s.plan.upsert != nil {
				rec.Release() // converted only to check the rows; the commit writes them
				break
			}
			if err := w.send(ctx, g.ts, rec); err != nil {
				return err
			}
			break
		}
		if w.s.plan.upsert != nil {
			w.buffer(g, dels)
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
			g = &routed{ts: ts}
			byName[name] = g
			groups = append(groups, g)
		}
		if i < len(b.Pos) && g.ts.covered.Covers(b.Pos[i]) {
			continue
		}
		g.rows = append(g.rows, w.s.plan.project(row))
		g.idx = append(g.idx, i)
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

// send hands rec to the lane's run for ts, starting it if needed.
func (w *laneWriter) send(ctx context.Context, ts *tableState, rec arrow.RecordBatch) error {
	if w.segs == nil {
		w.segs = map[*tableState]*segment{}
	}
	seg := w.segs[ts]
	if seg == nil {
		seg = startSegment(ts.wr)
		w.segs[ts] = seg
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

// Flush ends the lane's part of epoch: its files are closed and belong to the epoch.
func (w *laneWriter) Flush(ctx context.Context, epoch uint64) error {
	if epoch <= w.flushed {
		if epoch == w.flushed && len(w.segs) == 0 && len(w.ups) == 0 {
			return nil // a repeated Flush
		}
		return fmt.Errorf("%s: lane %d flushes epoch %d after epoch %d", w.s.what, w.lane, epoch, w.flushed)
	}
	segs := w.segs
	w.segs = nil
	for ts, ch := range w.ups {
		w.s.sealChanges(ts, epoch, ch)
	}
	w.ups = nil
	for _, seg := range segs {
		close(seg.in)
	}
	var errs []error
	for ts, seg := range segs {
		select {
		case <-seg.done:
		case <-ctx.Done():
			for _, seg := range segs {
				seg.cancel()
			}
			for _, seg := range segs {
				<-seg.done
			}
			return ctx.Err()
		}
		if seg.err != nil {
			errs = append(errs, w.s.writeErr(ts, seg.err))
			continue
		}
		for _, df := range seg.files {
			w.s.filesWritten.Add(1)
			w.s.bytesWritten.Add(df.FileSizeBytes())
		}
		w.s.seal(ts, epoch, seg.files)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w.flushed = epoch
	return nil
}

// abort stops the open runs; their files are never committed.
func (w *laneWriter) abort() {
	for _, seg := range w.segs {
		seg.cancel()
		close(seg.in)
		<-seg.done
	}
	w.segs = nil
	w.ups = nil
}

// startSegment starts a run of the table's record writer over a new channel.
func startSegment(wr *writing) *segment {
	ctx, cancel := context.WithCancel(context.Background())
	seg := &segment{in: make(chan arrow.RecordBatch, 2), done: make(chan struct{}), cancel: cancel}
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
			table.WithMaxWriteWorkers(1)) {
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
