package bigquery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"cloud.google.com/go/bigquery/storage/managedwriter"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// maxRequestBytes bounds the rows of one append: BigQuery refuses requests over 10 MB.
const maxRequestBytes = 9 << 20

// laneWriter is one lane's side of the sink. Its rows go to the lane's slot: with
// exactly_once to the slot's pending stream of the lane's current segment (the rows since
// the lane's last Flush), with at_least_once to the table's default stream.
type laneWriter struct {
	s       *sink
	slot    *slot
	seg     int             // how many times this lane has flushed: its rows go to segment seg
	rowSize int             // encoded bytes per row of the previous batch, to size the next one's buffer
	scratch schemas.Row     // a row with its source position columns (source_position_columns)
	written schemas.Offsets // exactly_once: per partition, the first offset appended since Flush
}

// slot is a write stream the lanes share when num_streams is below the number of lanes (one
// lane per slot otherwise). With exactly_once it holds a pending stream per segment; a
// segment's stream is finalized when every lane of the slot has flushed it.
type slot struct {
	s       *sink
	sharers int // lanes writing to this slot

	mu      sync.Mutex
	segs    map[int]*segment             // exactly_once
	dflt    *managedwriter.ManagedStream // at_least_once: the default stream
	flushes map[int]int                  // segment -> lanes that flushed it
}

// segment is one pending stream: the rows of one segment of the slot's lanes.
type segment struct {
	ms   *managedwriter.ManagedStream
	next int64 // the offset of the next append
}

func (w *laneWriter) Write(ctx context.Context, b *schemas.Batch) error {
	return w.write(ctx, b, nil)
}

// WriteWithErrors is Write for a sink with error_handling: rows that cannot be encoded or
// that BigQuery rejects go to the error output through emit.
func (w *laneWriter) WriteWithErrors(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	return w.write(ctx, b, emit)
}

// pendingRow is an encoded row and its index in the batch.
type pendingRow struct {
	data []byte
	idx  int
}

func (w *laneWriter) write(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	if len(b.Rows) == 0 {
		return nil
	}
	errOut := w.s.p.errOut
	if emit == nil {
		errOut = nil
	}
	var errs *schemas.Batch
	fail := func(i int, err error) error {
		err = fmt.Errorf("%s: %w", w.s.what, err)
		if errOut == nil {
			return &component.RowError{Pos: position(b, i), Err: err}
		}
		var ferr error
		errs, ferr = errOut.Add(errs, b, i, err)
		return ferr
	}
	rows := make([]pendingRow, 0, len(b.Rows))
	buf := make([]byte, 0, len(b.Rows)*max(w.rowSize, 64)*9/8) // growing it costs copies
	positions := w.s.p.cfg.SourcePositionColumns
	for i, row := range b.Rows {
		if positions {
			w.scratch = appendPosition(w.scratch, row, position(b, i))
			row = w.scratch
		}
		start := len(buf)
		var err error
		if buf, err = w.s.enc.Encode(buf, row); err != nil {
			if err := fail(i, err); err != nil {
				return err
			}
			continue
		}
		rows = append(rows, pendingRow{data: buf[start:len(buf):len(buf)], idx: i})
	}
	if len(rows) > 0 {
		w.rowSize = len(buf)/len(rows) + 1
	}
	if err := w.slot.append(ctx, w.seg, rows, fail); err != nil {
		return err
	}
	w.noteWritten(b, rows)
	return errOut.Emit(errs, emit)
}

// noteWritten records, per partition, the lowest offset of the rows appended (exactly_once):
// where the partition's rows of the next commit begin, which its intent records.
func (w *laneWriter) noteWritten(b *schemas.Batch, rows []pendingRow) {
	if !w.s.exactly || len(b.Pos) != len(b.Rows) {
		return
	}
	if w.written == nil {
		w.written = schemas.Offsets{}
	}
	var last schemas.Position
	for i, r := range rows {
		p := b.Pos[r.idx]
		if i > 0 && p.Source == last.Source && p.Partition == last.Partition && p.Offset >= last.Offset {
			last = p
			continue // a batch holds a run of one partition, in order
		}
		last = p
		if cur, ok := w.written.Get(p.Source, p.Partition); !ok || p.Offset < cur {
			w.written.Set(p.Source, p.Partition, p.Offset)
		}
	}
}

// position is the position of row i of b, if it has one.
func position(b *schemas.Batch, i int) schemas.Position {
	if i < len(b.Pos) {
		return b.Pos[i]
	}
	return schemas.Position{}
}

// Flush ends the lane's segment; once every lane of the slot has flushed it, its stream is
// finalized and belongs to epoch.
func (w *laneWriter) Flush(ctx context.Context, epoch uint64) error {
	seg := w.seg
	w.seg++
	if !w.s.exactly {
		return nil // every append was acknowledged before Write returned
	}
	w.s.wrote(epoch, w.written)
	w.written = nil
	return w.slot.flush(ctx, seg, epoch)
}

// append appends rows to the slot's stream for segment seg, in requests of at most
// maxRequestBytes, and waits for BigQuery to acknowledge them. When BigQuery rejects rows
// (the whole request fails), they go to fail and the others are appended again.
func (sl *slot) append(ctx context.Context, seg int, rows []pendingRow, fail func(int, error) error) error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for len(rows) > 0 {
		ms, first, err := sl.stream(ctx, seg)
		if err != nil {
			return err
		}
		type sent struct {
			res   *managedwriter.AppendResult
			rows  []pendingRow
			start int64
		}
		var reqs []sent
		offset := first
		for rest := rows; len(rest) > 0; {
			n, size := 0, 0
			for n < len(rest) && (n == 0 || size+len(rest[n].data) <= maxRequestBytes) {
				size += len(rest[n].data)
				n++
			}
			data := make([][]byte, n)
			for i := range n {
				data[i] = rest[i].data
			}
			var opts []managedwriter.AppendOption
			if offset >= 0 {
				opts = append(opts, managedwriter.WithOffset(offset))
			}
			res, err := ms.AppendRows(ctx, data, opts...)
			if err != nil {
				return fmt.Errorf("%s: append to %s: %w", sl.s.what, sl.s.p.ref, err)
			}
			sl.s.bytesWritten.Add(int64(size))
			reqs = append(reqs, sent{res: res, rows: rest[:n], start: offset})
			if offset >= 0 {
				offset += int64(n)
			}
			rest = rest[n:]
		}
		// Wait for every request; after a rejected one, the later ones fail too (their
		// offsets are past the stream's end), so the rows from it on are appended again.
		retryFrom := -1
		var rejected map[int]string
		for i, r := range reqs {
			resp, err := r.res.FullResponse(ctx)
			if err == nil {
				continue
			}
			if retryFrom >= 0 {
				continue // a consequence of the rejection
			}
			if code, ok := storageErrorCode(err); ok && isOffsetAlreadyExists(code) && r.start >= 0 {
				continue // an earlier attempt of this very append went through
			}
			if rowErrs := resp.GetRowErrors(); len(rowErrs) > 0 {
				rejected = map[int]string{}
				for _, re := range rowErrs {
					rejected[int(re.GetIndex())] = re.GetMessage()
				}
				retryFrom = i
				continue
			}
			return fmt.Errorf("%s: append to %s: %w", sl.s.what, sl.s.p.ref, err)
		}
		if retryFrom < 0 {
			sl.advance(seg, offset)
			return nil
		}
		// Everything before the rejected request is in; the rest is appended again without
		// the rejected rows.
		sl.advance(seg, reqs[retryFrom].start)
		var again []pendingRow
		for i, r := range reqs[retryFrom:] {
			for j, row := range r.rows {
				if msg, bad := rejected[j]; i == 0 && bad {
					if err := fail(row.idx, errors.New("BigQuery rejected the row: "+msg)); err != nil {
						return err
					}
					continue
				}
				again = append(again, row)
			}
		}
		rows = again
	}
	return nil
}

// stream returns the stream of segment seg and the offset of its next append (-1 for the
// default stream, which takes no offsets), creating a pending stream when needed.
func (sl *slot) stream(ctx context.Context, seg int) (*managedwriter.ManagedStream, int64, error) {
	s := sl.s
	if !s.exactly {
		if sl.dflt == nil {
			ms, err := s.mw.NewManagedStream(ctx, managedwriter.WithType(managedwriter.DefaultStream),
				managedwriter.WithDestinationTable(s.p.ref.parent()), managedwriter.WithSchemaDescriptor(s.enc.Descriptor()),
				managedwriter.EnableWriteRetries(true))
			if err != nil {
				return nil, 0, fmt.Errorf("%s: open the default stream of %s: %w", s.what, s.p.ref, err)
			}
			sl.dflt = ms
		}
		return sl.dflt, -1, nil
	}
	sg := sl.segs[seg]
	if sg == nil {
		ms, err := s.mw.NewManagedStream(ctx, managedwriter.WithType(managedwriter.PendingStream),
			managedwriter.WithDestinationTable(s.p.ref.parent()), managedwriter.WithSchemaDescriptor(s.enc.Descriptor()))
		if err != nil {
			return nil, 0, fmt.Errorf("%s: create a pending stream on %s: %w", s.what, s.p.ref, err)
		}
		sg = &segment{ms: ms}
		sl.segs[seg] = sg
	}
	return sg.ms, sg.next, nil
}

// advance records that segment seg's stream holds rows up to offset.
func (sl *slot) advance(seg int, offset int64) {
	if sg := sl.segs[seg]; sg != nil && offset >= 0 {
		sg.next = offset
	}
}

// flush counts a lane's flush of segment seg; the last lane of the slot to flush it finalizes
// its stream, checks the row count and hands it to the epoch.
func (sl *slot) flush(ctx context.Context, seg int, epoch uint64) error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.flushes == nil {
		sl.flushes = map[int]int{}
	}
	sl.flushes[seg]++
	if sl.flushes[seg] < sl.sharers {
		return nil
	}
	delete(sl.flushes, seg)
	sg := sl.segs[seg]
	delete(sl.segs, seg)
	if sg == nil {
		return nil // no rows in this segment
	}
	defer closeStream(sg.ms)
	rows, err := sg.ms.Finalize(ctx)
	if err != nil {
		return fmt.Errorf("%s: finalize stream %s: %w", sl.s.what, sg.ms.StreamName(), err)
	}
	if rows != sg.next {
		return fmt.Errorf("%s: stream %s holds %d rows, and %d were appended", sl.s.what, sg.ms.StreamName(), rows, sg.next)
	}
	sl.s.sealed(epoch, finalStream{name: sg.ms.StreamName(), rows: rows})
	return nil
}

// close closes the slot's streams; pending streams not finalized are never committed.
func (sl *slot) close() error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	var errs []error
	for _, sg := range sl.segs {
		errs = append(errs, closeStream(sg.ms))
	}
	sl.segs = map[int]*segment{}
	if sl.dflt != nil {
		errs = append(errs, closeStream(sl.dflt))
		sl.dflt = nil
	}
	return errors.Join(errs...)
}

// closeStream closes ms; the end of its connection (io.EOF) is how a close ends.
func closeStream(ms *managedwriter.ManagedStream) error {
	if err := ms.Close(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("close stream %s: %w", ms.StreamName(), err)
	}
	return nil
}
