package iceberg

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// laneWriter is one lane's side of the sink. Between two Flushes it feeds its records into one
// run of iceberg-go's record writer (a segment), which keeps one open Parquet file per table
// partition and rolls it at the target file size; Flush ends the run and seals its files for
// the epoch.
type laneWriter struct {
	s       *sink
	lane    int
	flushed uint64 // the last epoch this lane flushed
	seg     *segment
}

// segment is one run of table.WriteRecords fed from a channel.
type segment struct {
	in     chan arrow.RecordBatch
	done   chan struct{} // closed when the run has ended; then files and err are set
	cancel context.CancelFunc
	files  []iceberg.DataFile
	err    error
}

// Write converts the rows of b into an Arrow record and hands it to the lane's open run.
func (w *laneWriter) Write(ctx context.Context, b *schemas.Batch) error {
	if len(b.Rows) == 0 {
		return nil
	}
	rows := b.Rows
	if w.s.plan.project != nil {
		rows = make([]schemas.Row, len(b.Rows))
		for i, r := range b.Rows {
			rows[i] = w.s.plan.project(r)
		}
	}
	wr, err := w.s.writing()
	if err != nil {
		return err
	}
	rec, err := wr.conv.record(rows, b.Pos)
	if err != nil {
		return fmt.Errorf("%s: table %s: %w", w.s.what, w.s.cfg.Table, err)
	}
	if w.seg == nil {
		w.seg = startSegment(wr)
	}
	select {
	case w.seg.in <- rec:
		return nil
	case <-w.seg.done:
		rec.Release()
		return w.s.writeErr(w.seg.err)
	case <-ctx.Done():
		rec.Release()
		return ctx.Err()
	}
}

// Flush ends the lane's part of epoch: its files are closed and belong to the epoch.
func (w *laneWriter) Flush(ctx context.Context, epoch uint64) error {
	if epoch <= w.flushed {
		if epoch == w.flushed && w.seg == nil {
			return nil // a repeated Flush
		}
		return fmt.Errorf("%s: lane %d flushes epoch %d after epoch %d", w.s.what, w.lane, epoch, w.flushed)
	}
	if w.seg != nil {
		seg := w.seg
		w.seg = nil
		close(seg.in)
		select {
		case <-seg.done:
		case <-ctx.Done():
			seg.cancel()
			<-seg.done
			return ctx.Err()
		}
		if seg.err != nil {
			return w.s.writeErr(seg.err)
		}
		w.s.seal(epoch, seg.files)
	}
	w.flushed = epoch
	return nil
}

// abort stops the open run; its files are never committed.
func (w *laneWriter) abort() {
	if w.seg != nil {
		w.seg.cancel()
		close(w.seg.in)
		<-w.seg.done
		w.seg = nil
	}
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
		for df, err := range table.WriteRecords(ctx, wr.tbl, wr.conv.schema, records,
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
