package component

import (
	"context"
	"errors"
	"time"
)

// CheckpointStore keeps the checkpoints of sinks that cannot commit them together with their
// data (WriteToBigQuery: BigQuery commits rows, not offsets). A source offers one when it can
// keep them where they outlive the machine (ReadFromKafka: a compacted topic of its cluster).
// Every copy of a pipeline saves under its own key, sink@instance; Load returns them all.
type CheckpointStore interface {
	// Load returns the value last saved by every copy of sink (pipeline/sink name), keyed
	// sink or sink@instance, with when it was saved; empty when there is none.
	Load(ctx context.Context, sink string) (map[string]Stored, error)
	// Writer opens the writer of one copy of sink (instance "" for a single copy). Opening
	// fences an earlier writer of the same copy: from then on its Save fails.
	Writer(ctx context.Context, sink, instance string) (CheckpointWriter, error)
	// Where names the store in messages.
	Where() string
}

// Stored is a value a CheckpointStore holds, and when it was saved.
type Stored struct {
	Value []byte
	At    time.Time
}

// CheckpointWriter saves one copy's value.
type CheckpointWriter interface {
	// Save durably replaces the copy's value. It fails with ErrFencedCopy when a newer writer
	// of the copy opened, or when one of fences (the copy's consumer-group memberships) is
	// stale: the copy lost its partitions and must not commit.
	Save(ctx context.Context, value []byte, fences []GroupFence) error
	// Key is the key the copy's value is saved under, as Load returns it.
	Key() string
	Close() error
}

// ErrFencedCopy is what a write of a copy of the pipeline that lost its partitions to another
// copy, or was replaced by a newer run of itself, fails with.
var ErrFencedCopy = errors.New("this copy of the pipeline lost its partitions to another member of its consumer group, or was replaced by a newer run of itself")

// CheckpointStores is implemented by sources that offer a CheckpointStore to the sinks
// downstream of them.
type CheckpointStores interface {
	CheckpointStore() CheckpointStore
}

// CheckpointStoreUser is implemented by sinks that keep their checkpoints in a store when a
// source upstream offers one. The runner calls UseCheckpointStore when it builds the
// pipeline, before Open and before ReadCheckpoint, with the first such source's store.
type CheckpointStoreUser interface {
	UseCheckpointStore(CheckpointStore)
}
