package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// laneWriter is one lane's side of a sink: it encodes rows and produces them asynchronously,
// and Flush waits until Kafka acknowledged them.
//
// With exactly_once, the records a lane writes after Flush(E) belong to the next transaction:
// until Commit(E) has ended the current one, they are held in memory (and while Commit runs,
// the lane waits). If the runner flushes E again instead (an epoch it did not commit), the
// held records go into the open transaction with that flush.
type laneWriter struct {
	s       *sink
	lane    int
	enc     formats.Encoder
	header  []byte        // heads every value that is not null
	flushed uint64        // the last epoch this lane flushed; the lane's own
	held    []*kgo.Record // written after Flush(flushed), waiting for its Commit
	dirty   atomic.Bool   // records went into the open transaction since the last Flush
	sent    inflight      // produced records not acknowledged yet
	rowSize int           // bytes per row of the previous batch, to size the next one's buffer
	errs    *component.ErrorOutput
}

func newLaneWriter(s *sink, lane int, committed uint64) *laneWriter {
	return &laneWriter{s: s, lane: lane, enc: s.format.NewEncoder(), header: s.header, flushed: committed, errs: s.errOut}
}

// Write encodes the rows of b and produces them. A row that cannot be encoded stops the
// pipeline at its position (see WriteWithErrors).
func (w *laneWriter) Write(ctx context.Context, b *schemas.Batch) error {
	return w.write(ctx, b, nil)
}

// WriteWithErrors is Write for a sink with error_handling: rows that cannot be encoded go to
// the error output through emit instead of stopping the pipeline.
func (w *laneWriter) WriteWithErrors(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	return w.write(ctx, b, emit)
}

func (w *laneWriter) write(ctx context.Context, b *schemas.Batch, emit component.Emit) error {
	cl, exactly, err := w.s.state()
	if err != nil {
		return err
	}
	if len(b.Rows) == 0 {
		return nil
	}
	errOut := w.errs
	if emit == nil {
		errOut = nil // no way to the error output: a failed row stops the pipeline
	}
	recs, errRows, err := w.encode(b, errOut)
	if err != nil {
		return err
	}
	if err := errOut.Emit(errRows, emit); err != nil {
		return err
	}
	if !exactly {
		w.send(ctx, cl, recs, false)
		return nil
	}
	w.s.txnMu.RLock() // waits while a Commit ends the transaction
	defer w.s.txnMu.RUnlock()
	if w.flushed > w.s.committed {
		w.held = append(w.held, recs...)
		return nil
	}
	w.send(ctx, cl, w.held, true)
	w.held = nil
	w.send(ctx, cl, recs, true)
	return nil
}

// valueChunk is the most bytes of encoded values (of a batch's rows) that share one buffer.
// A record keeps its buffer alive until the broker acknowledges it, so a producer holding
// produceBufferBytes of records holds at most a chunk more than that, where one buffer per
// batch held up to a whole batch more per lane (2048 rows of 1 KiB: 2.3 MB).
const valueChunk = 256 << 10

// encode turns the rows of b into records whose values share buffers of about valueChunk
// bytes. Rows that fail go to errOut (nil: the first one's RowError is returned).
func (w *laneWriter) encode(b *schemas.Batch, errOut *component.ErrorOutput) ([]*kgo.Record, *schemas.Batch, error) {
	schema := b.Schema
	if schema == nil {
		schema = w.s.input
	}
	recs := make([]*kgo.Record, 0, len(b.Rows))
	data := w.chunk(len(b.Rows))
	chunk := recs // the records whose values are in data
	var errRows *schemas.Batch
	total := 0 // bytes of the values
	for i, row := range b.Rows {
		r := &kgo.Record{Topic: w.s.topic}
		if w.s.keyOf != nil {
			v, err := w.s.keyOf(row)
			if err == nil {
				r.Key, err = keyBytes(v)
			}
			if err != nil {
				if errRows, err = errOut.Add(errRows, b, i, fmt.Errorf("%s: %w", w.s.what, err)); err != nil {
					return nil, nil, err
				}
				continue
			}
		}
		start := len(data)
		data = append(data, w.header...)
		var null bool
		var err error
		data, null, err = w.enc(data, schema, row)
		if err != nil {
			data = data[:start]
			if errRows, err = errOut.Add(errRows, b, i, fmt.Errorf("%s: %w", w.s.what, err)); err != nil {
				return nil, nil, err
			}
			continue
		}
		if null {
			data = data[:start]
		} else {
			r.Value = data[start:len(data):len(data)] // settle moves it into data as it ends
		}
		recs = append(recs, r)
		if len(data) >= valueChunk && i+1 < len(b.Rows) {
			total += settle(chunk, data)
			data = w.chunk(len(b.Rows) - i - 1)
			chunk = recs[len(recs):]
		}
	}
	total += settle(chunk, data)
	if len(recs) > 0 {
		w.rowSize = total/len(recs) + 1
	}
	return recs, errRows, nil
}

// chunk is a buffer for the values of the rows left, up to about valueChunk bytes (growing
// it costs copies).
func (w *laneWriter) chunk(rowsLeft int) []byte {
	return make([]byte, 0, max(min(rowsLeft*w.rowSize*9/8, valueChunk+2*w.rowSize), 256))
}

// settle points the values of recs into data as it ends, and returns its length. Each value
// was sliced from data as it was when the value was encoded; append may have moved data to a
// larger array since, and a value left in an old array would keep that array alive too.
func settle(recs []*kgo.Record, data []byte) int {
	start := 0
	for _, r := range recs {
		if r.Value == nil {
			continue
		}
		end := start + len(r.Value)
		r.Value = data[start:end:end]
		start = end
	}
	return len(data)
}

// send produces records asynchronously; txn marks them as part of the open transaction.
func (w *laneWriter) send(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, txn bool) {
	if len(recs) == 0 {
		return
	}
	if txn {
		w.dirty.Store(true)
	}
	size := 0
	for _, r := range recs {
		size += len(r.Key) + len(r.Value)
		w.sent.add()
		cl.Produce(ctx, r, w.sent.done)
	}
	w.s.bytes.Add(int64(size))
}

// Flush ends the lane's part of epoch: it waits until Kafka acknowledged every record the lane
// produced, and fails with the first produce error.
func (w *laneWriter) Flush(ctx context.Context, epoch uint64) error {
	cl, exactly, err := w.s.state()
	if err != nil {
		return err
	}
	if epoch < w.flushed {
		return fmt.Errorf("%s: lane %d flushes epoch %d after epoch %d", w.s.what, w.lane, epoch, w.flushed)
	}
	if exactly && len(w.held) > 0 {
		// Held records wait for a Commit; flushing again means the epoch they waited for
		// was not committed and goes on: they belong to it.
		w.s.txnMu.RLock()
		w.send(ctx, cl, w.held, true)
		w.held = nil
		w.s.txnMu.RUnlock()
	}
	if exactly && w.sent.pending() {
		// Send what lingers (the client's linger, 10 ms by default) now: the epoch's commit
		// waits for it. No lane produces into the transaction once past its barrier, so this
		// ends when the slowest lane has flushed, as the commit would wait anyway.
		if err := cl.Flush(ctx); err != nil {
			return fmt.Errorf("%s: flushing epoch %d: %w", w.s.what, epoch, err)
		}
	}
	if err := w.sent.wait(ctx); err != nil {
		return fmt.Errorf("%s: flushing epoch %d: %w", w.s.what, epoch, err)
	}
	w.flushed = epoch
	w.dirty.Store(false)
	return nil
}

// checkSealed fails when the lane put records into the open transaction after its last
// Flush: committing them with the checkpoint of epoch would deliver them twice after a
// restart.
func (w *laneWriter) checkSealed(epoch uint64) error {
	if w.dirty.Load() {
		return fmt.Errorf("%s: lane %d wrote records it did not flush before the commit of epoch %d", w.s.what, w.lane, epoch)
	}
	return nil
}

// inflight counts produced records until Kafka acknowledges them and keeps the first error.
type inflight struct {
	mu   sync.Mutex
	n    int
	err  error
	idle chan struct{} // closed when n drops to zero while Flush waits
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

// done is the produce promise.
func (f *inflight) done(r *kgo.Record, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("producing to topic %s partition %d: %w", r.Topic, r.Partition, err)
	}
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// pending reports whether records are in flight.
func (f *inflight) pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n > 0
}

// wait waits until no record is in flight and returns the first error ever recorded: after a
// failed record, the lane's output has a gap and must not be committed.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		defer f.mu.Unlock()
		return f.err
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
