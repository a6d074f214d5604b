package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CheckpointStore is ReadFromKafka's offer to the sinks downstream that cannot keep their
// checkpoints with their data (WriteToBigQuery): the compacted topic CheckpointTopic of the
// source's cluster, where WriteToKafka keeps its own. It outlives the machine, and every copy
// of the pipeline reads what the others saved.
func (s *source) CheckpointStore() component.CheckpointStore {
	return &checkpointStore{set: s.set}
}

type checkpointStore struct{ set *settings }

func (c *checkpointStore) Where() string {
	return fmt.Sprintf("topic %s of %s", CheckpointTopic, strings.Join(c.set.bootstrap, ","))
}

// Load reads the values every copy of sink saved; without the topic there are none.
func (c *checkpointStore) Load(ctx context.Context, sink string) (map[string]component.Stored, error) {
	return readStored(ctx, c.set, sink)
}

// storeTxnTimeout bounds a Save's transaction, which holds one record: should a writer die
// inside it, other copies' Loads wait this long at most (its own next run fences it at once).
const storeTxnTimeout = time.Minute

// Writer opens the transactional writer of one copy of sink: initializing its producer id
// fences an earlier writer of the copy and aborts its open transaction, if any.
func (c *checkpointStore) Writer(ctx context.Context, sink, instance string) (component.CheckpointWriter, error) {
	key := sink
	if instance != "" {
		key += "@" + instance
	}
	txnID := "sluice-store/" + key
	cl, err := c.set.newClient(kgo.TransactionalID(txnID), kgo.TransactionTimeout(storeTxnTimeout))
	if err != nil {
		return nil, err
	}
	if err := ensureCheckpointTopic(ctx, kadm.NewClient(cl)); err != nil {
		cl.Close()
		return nil, err
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("initializing the transactional producer %q: %w", txnID, err)
	}
	return &storeWriter{cl: cl, key: key, fencer: &groupFencer{txnID: txnID}}, nil
}

// storeWriter saves one copy's value, each Save in a transaction of its own that also commits
// the copy's consumer-group offsets with its generation: a copy that lost its partitions
// cannot save.
type storeWriter struct {
	mu     sync.Mutex // one Save at a time
	cl     *kgo.Client
	key    string
	fencer *groupFencer
}

func (w *storeWriter) Save(ctx context.Context, value []byte, fences []component.GroupFence) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("saving the checkpoint of %s: %w", w.key, err)
	}
	err := w.cl.ProduceSync(ctx, &kgo.Record{Topic: CheckpointTopic, Key: []byte(w.key), Value: value}).FirstErr()
	if err == nil {
		err = w.fencer.commit(ctx, w.cl, fences)
	}
	if err != nil {
		abortTxn(ctx, w.cl)
		return fmt.Errorf("saving the checkpoint of %s (aborted): %w", w.key, fenced(err))
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		abortTxn(ctx, w.cl)
		return fmt.Errorf("saving the checkpoint of %s failed, or its outcome is unknown: %w", w.key, fenced(err))
	}
	return nil
}

// fenced marks err as component.ErrFencedCopy when Kafka says that a newer writer of the same
// transactional id took over.
func fenced(err error) error {
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		return fmt.Errorf("%w: %w", component.ErrFencedCopy, err)
	}
	return err
}

func (w *storeWriter) Key() string { return w.key }

func (w *storeWriter) Close() error {
	w.cl.Close()
	return nil
}
