package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sink writes one topic. With exactly_once, each epoch is one transaction of the sink's
// transactional producer that also writes the checkpoint to CheckpointTopic; with
// at_least_once, an idempotent producer writes as it goes, Flush waits for the lane's
// records, and Commit writes the checkpoint. docs/kafka.md has the protocol.
type sink struct {
	what   string // the component, for messages
	name   string // the sink's name in the pipeline
	topic  string
	set    *settings
	format formats.Writing
	input  *schemas.Schema // for batches that carry none
	errOut *component.ErrorOutput
	keyOf  component.RowFunc // the record key expression, or nil
	// create, when set, is the topic to create when the sink opens (a repartition topic).
	create *topicSpec
	// exactly: the pipeline's delivery is exactly_once (component.Options.Delivery).
	exactly bool
	// bytes counts the keys and values produced in this process (Written).
	bytes atomic.Int64

	commitMu sync.Mutex // serializes Open, Commit and Close

	// txnMu, with exactly_once: Commit holds it to end the epoch's transaction and begin the
	// next; lanes hold it for reading while they produce, so they stall during a commit.
	txnMu     sync.RWMutex
	committed uint64 // the last committed epoch; written under txnMu and commitMu

	mu       sync.Mutex // guards the fields below; never held across I/O
	cl       *kgo.Client
	pipeline string
	key      string
	// shared: several copies write the sink (SinkInfo.Shared), each its own record, whose
	// offsets are recorded (Commit.OwnRecord). Both are set under commitMu.
	shared   bool
	recorded schemas.Offsets
	fencer   *groupFencer // with exactly_once: commits grouped sources' offsets (fence.go)
	writers  map[int]*laneWriter
	failed   error  // set when the sink cannot go on (a failed transaction)
	header   []byte // heads every value: the Confluent wire format's, or none

	// hook, when set (tests), is called at each step of an exactly-once Commit; an error stops
	// the commit there, as a crash would.
	hook func(step string) error
}

// The steps of an exactly-once Commit at which sink.hook is called.
const (
	stepFlushed = "flushed" // the checkpoint record is written into the transaction
	stepEnd     = "end"     // the transaction is about to end
)

// Summary says what the sink committed, for the end of a run.
func (s *sink) Summary() string {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return fmt.Sprintf("committed through epoch %d to topic %s", s.committed, s.topic)
}

// Open connects, creates the checkpoint topic if needed, fences any earlier producer of the
// sink (exactly_once) and returns the sink's last committed checkpoint.
// DeliversAsWritten: with at_least_once, records are produced as they come.
func (s *sink) DeliversAsWritten() {}

func (s *sink) Open(ctx context.Context, info component.SinkInfo) (*component.Checkpoint, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeClient(ctx)
	var header []byte
	if s.format.Wire != nil {
		var err error
		if header, err = s.format.Wire.Header(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	exactly := s.exactly
	key := checkpointKey(info.Pipeline, s.name, info.Instance)
	txnID := ""
	if exactly {
		txnID = s.set.txnID
		if txnID == "" {
			txnID = "sluice/" + key
		} else if info.Instance != "" {
			txnID += "@" + info.Instance // copies must not fence each other
		}
	}
	txnTimeout := s.set.txnTimeout
	switch {
	case txnTimeout == 0:
		txnTimeout = txnTimeoutFor(info.EpochInterval)
	case exactly && txnTimeout <= info.EpochInterval:
		return nil, fmt.Errorf("%s: transaction.timeout.ms (%v) is not longer than an epoch (%v): every epoch's transaction would time out; raise it or trigger more often",
			s.what, txnTimeout, info.EpochInterval)
	}
	cl, err := s.set.newClient(append(s.set.producerOpts(txnID, txnTimeout), s.set.metrics.hooks()...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	cp, own, err := s.open(ctx, cl, exactly, txnID, key, checkpointKey(info.Pipeline, s.name, ""))
	if err == nil && cp != nil && cp.Pipeline != info.Pipeline {
		err = fmt.Errorf("the checkpoint of %q in %s belongs to pipeline %q", key, CheckpointTopic, cp.Pipeline)
	}
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	s.txnMu.Lock()
	s.committed = 0
	if cp != nil {
		s.committed = cp.Epoch
	}
	s.txnMu.Unlock()
	s.mu.Lock()
	s.cl, s.pipeline, s.key, s.fencer = cl, info.Pipeline, key, &groupFencer{txnID: txnID}
	s.shared, s.recorded = info.Shared, schemas.Offsets{}
	if own != nil {
		s.recorded = own.Next
	}
	s.writers, s.failed, s.header = map[int]*laneWriter{}, nil, header
	s.mu.Unlock()
	return cp, nil
}

// open fences an earlier producer of txnID and returns the checkpoint of key, merged with those
// of the other copies of the sink base, and key's own record.
func (s *sink) open(ctx context.Context, cl *kgo.Client, exactly bool, txnID, key, base string) (merged, own *component.Checkpoint, err error) {
	adm := kadm.NewClient(cl)
	if s.create != nil {
		if err := s.create.ensure(ctx, s.set, cl, s.topic); err != nil {
			return nil, nil, err
		}
	}
	if _, err := partitionCounts(ctx, s.set, cl, []string{s.topic}, true); err != nil {
		return nil, nil, err
	}
	if err := ensureCheckpointTopic(ctx, adm); err != nil {
		return nil, nil, err
	}
	if exactly {
		// Initializing the producer ID fences an earlier producer with the same
		// transactional ID and aborts its open transaction, so that no zombie commits after
		// the checkpoint is read.
		if _, _, err := cl.ProducerID(ctx); err != nil {
			return nil, nil, fmt.Errorf("initializing the transactional producer %q: %w", txnID, err)
		}
	}
	all, err := readCheckpoints(ctx, s.set, adm, base)
	if err != nil {
		return nil, nil, err
	}
	if exactly {
		if err := cl.BeginTransaction(); err != nil {
			return nil, nil, fmt.Errorf("beginning a transaction: %w", err)
		}
	}
	return all.merged(key), all[key], nil
}

// Reload reads the checkpoints of every copy of the sink again and returns them merged: a
// copy in the same consumer group may have committed partitions this one is now given.
func (s *sink) Reload(ctx context.Context) (*component.Checkpoint, error) {
	all, key, err := s.readAll(ctx)
	if err != nil {
		return nil, err
	}
	return all.merged(key), nil
}

// ReloadCopies returns the last checkpoint of every copy of the sink.
func (s *sink) ReloadCopies(ctx context.Context) ([]*component.Checkpoint, error) {
	all, _, err := s.readAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*component.Checkpoint, 0, len(all))
	for _, cp := range all {
		if cp != nil {
			out = append(out, cp)
		}
	}
	return out, nil
}

// readAll reads the checkpoints of every copy of the sink and returns them with this copy's
// key.
func (s *sink) readAll(ctx context.Context) (sinkCheckpoints, string, error) {
	s.mu.Lock()
	cl, key, pipeline := s.cl, s.key, s.pipeline
	s.mu.Unlock()
	if cl == nil {
		return nil, "", fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	all, err := readCheckpoints(ctx, s.set, kadm.NewClient(cl), checkpointKey(pipeline, s.name, ""))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.what, err)
	}
	return all, key, nil
}

// Writer returns the writer of a lane.
func (s *sink) Writer(lane int) component.Writer {
	s.txnMu.RLock() // before mu: Commit holds txnMu while it takes mu
	committed := s.committed
	s.txnMu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writers == nil {
		s.writers = map[int]*laneWriter{}
	}
	w := s.writers[lane]
	if w == nil {
		w = newLaneWriter(s, lane, committed)
		s.writers[lane] = w
	}
	return w
}

// state returns the client and the sink's failure, if any.
func (s *sink) state() (*kgo.Client, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl == nil && s.failed == nil {
		return nil, false, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	return s.cl, s.exactly, s.failed
}

// fail records that the sink cannot go on and returns err.
func (s *sink) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = err
	}
	return err
}

func (s *sink) lanes() []*laneWriter {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*laneWriter, 0, len(s.writers))
	for _, w := range s.writers {
		out = append(out, w)
	}
	return out
}

// Commit makes the records flushed for epochs up to cp.Epoch visible together with cp. With
// exactly_once it writes cp into the epoch's transaction and commits it; lanes that write the
// next epoch meanwhile wait. An epoch already committed is left as it is.
func (s *sink) Commit(ctx context.Context, cp component.Commit) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cl, exactly, err := s.state()
	if err != nil {
		return err
	}
	if cp.Pipeline != s.pipeline {
		return fmt.Errorf("%s: commit for pipeline %q, opened for %q", s.what, cp.Pipeline, s.pipeline)
	}
	if cp.Epoch <= s.committed {
		return nil
	}
	if s.shared {
		cp.Next = cp.OwnRecord(s.recorded)
	}
	rec, err := checkpointRecord(s.key, cp.Checkpoint)
	if err != nil {
		return err
	}
	if !exactly {
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			return fmt.Errorf("%s: writing the checkpoint of epoch %d to %s: %w", s.what, cp.Epoch, CheckpointTopic, err)
		}
		s.txnMu.Lock()
		s.committed, s.recorded = cp.Epoch, cp.Next
		s.txnMu.Unlock()
		return nil
	}
	s.txnMu.Lock()
	defer s.txnMu.Unlock()
	if err := s.commitTxn(ctx, cl, rec, cp.Epoch, cp.Fences); err != nil {
		return s.fail(err)
	}
	s.committed, s.recorded = cp.Epoch, cp.Next
	if err := cl.BeginTransaction(); err != nil {
		return s.fail(fmt.Errorf("%s: beginning the transaction after epoch %d: %w", s.what, cp.Epoch, err))
	}
	return nil
}

// commitTxn writes rec into the open transaction and commits it. On any failure before the
// commit is sent it aborts the transaction; when the commit's outcome is unknown it says so
// (the next Open finds out from the checkpoint topic).
func (s *sink) commitTxn(ctx context.Context, cl *kgo.Client, rec *kgo.Record, epoch uint64, fences []component.GroupFence) error {
	for _, w := range s.lanes() {
		if err := w.checkSealed(epoch); err != nil {
			s.abort(ctx, cl)
			return err
		}
	}
	var recErr error
	var wg sync.WaitGroup
	wg.Add(1)
	cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { recErr = err; wg.Done() })
	flushErr := cl.Flush(ctx)
	wg.Wait()
	if err := errors.Join(flushErr, recErr, s.step(stepFlushed)); err != nil {
		s.abort(ctx, cl)
		return fmt.Errorf("%s: writing epoch %d (aborted): %w", s.what, epoch, err)
	}
	s.mu.Lock()
	fencer := s.fencer
	s.mu.Unlock()
	if err := fencer.commit(ctx, cl, fences); err != nil {
		s.abort(ctx, cl)
		return fmt.Errorf("%s: epoch %d (aborted): %w", s.what, epoch, err)
	}
	if err := s.step(stepEnd); err != nil {
		s.abort(ctx, cl)
		return fmt.Errorf("%s: committing epoch %d (aborted): %w", s.what, epoch, err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		s.abort(ctx, cl)
		return fmt.Errorf("%s: committing the transaction of epoch %d failed, or its outcome is unknown (the next run resumes from whichever checkpoint is committed): %w", s.what, epoch, err)
	}
	return nil
}

// abort aborts the open transaction, as far as it can: a failure leaves it to Kafka's
// transaction timeout, or to the fencing of the next Open.
func (s *sink) abort(ctx context.Context, cl *kgo.Client) { abortTxn(ctx, cl) }

// abortTxn aborts cl's open transaction as far as it can, even when ctx has ended.
func abortTxn(ctx context.Context, cl *kgo.Client) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := cl.AbortBufferedRecords(ctx); err == nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
	}
}

func (s *sink) step(name string) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(name)
}

// Close aborts the open transaction (what it holds was never committed) and closes the client.
func (s *sink) Close(ctx context.Context) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeClient(ctx)
	return nil
}

func (s *sink) closeClient(ctx context.Context) {
	s.mu.Lock()
	cl, exactly := s.cl, s.exactly
	s.cl, s.writers = nil, nil
	s.mu.Unlock()
	if cl == nil {
		return
	}
	if exactly {
		s.txnMu.Lock()
		s.abort(ctx, cl)
		s.txnMu.Unlock()
	}
	cl.Close()
}

// Identity is what the sink writes: its topic.
func (s *sink) Identity() []string { return []string{"kafka topic " + s.topic} }

// Holds says what committed data the topic holds, or "" when it holds none
// (component.Occupied). A copy in the same consumer group that committed since Open read the
// checkpoints makes it "": the partitions it committed resume from its checkpoint when they
// are assigned.
func (s *sink) Holds(ctx context.Context) (string, error) {
	s.mu.Lock()
	cl, pipeline := s.cl, s.pipeline
	s.mu.Unlock()
	if cl == nil {
		return "", fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	adm := kadm.NewClient(cl)
	first, err := firstCommitted(ctx, s.set, adm, s.topic)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.what, err)
	}
	if first == nil {
		return "", nil
	}
	all, err := readCheckpoints(ctx, s.set, adm, checkpointKey(pipeline, s.name, ""))
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.what, err)
	}
	if len(all) > 0 {
		return "", nil
	}
	return fmt.Sprintf("topic %s holds committed records (the first at partition %d offset %d), and %s holds no checkpoint of this sink (%s)",
		s.topic, first.Partition, first.Offset, CheckpointTopic, checkpointKey(pipeline, s.name, "")), nil
}

// firstCommitted returns a committed record of topic, or nil when it holds none: reading
// read_committed from each partition's start to its last stable offset, it stops at the first
// record that is not a transaction marker. Offsets alone do not tell: a transaction that a
// crash aborted takes offsets and leaves no record.
func firstCommitted(ctx context.Context, set *settings, adm *kadm.Client, topic string) (*kgo.Record, error) {
	var first *kgo.Record
	err := readCommittedTo(ctx, set, adm, topic, adm.ListCommittedOffsets, func(r *kgo.Record) bool {
		if !r.Attrs.IsControl() {
			first = r
		}
		return first != nil
	})
	return first, err
}

// Claim writes a checkpoint of epoch 0 at next, with at_least_once (component.Occupied):
// its records are visible as they are produced, before their epoch's checkpoint. With
// exactly_once the records are visible only together with a checkpoint.
func (s *sink) Claim(ctx context.Context, next schemas.Offsets) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cl, exactly, err := s.state()
	if err != nil || exactly {
		return err
	}
	rec, err := checkpointRecord(s.key, component.Checkpoint{Pipeline: s.pipeline, Next: next})
	if err != nil {
		return err
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("%s: writing the first checkpoint to %s: %w", s.what, CheckpointTopic, err)
	}
	if s.shared {
		s.recorded = next
	}
	return nil
}
