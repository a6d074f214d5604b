// Package component is the contract between the runner and the things a pipeline is made of:
// the Transform, Source and Sink interfaces, the registry that maps a YAML `type:` to a
// component, the build Context through which a component checks its config and declares its
// outputs, and the typed config decoding that gives every problem a file:line:col.
//
// Components register themselves in init(), as database/sql drivers do; transforms/all and
// connectors/all import every implementation.
package component

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// Main is the tag of a component's main output. With error_handling a component has a second
// output, named by error_handling.output; a bare reference to the component means Main.
const Main = "good"

// Emit hands a batch to the consumers of the output tag. Every emitted batch carries one
// Position per row (a row derived from an input row keeps its position): the runner drops a
// sink's already-committed records by position. The batch belongs to the receivers
// from then on: the emitter must not change it afterwards.
type Emit func(tag string, b *schemas.Batch) error

// Transform is a pure stage: no I/O, no acknowledgements. Process may be called concurrently
// from several lanes, each lane serially; a batch is read-only to it.
type Transform interface {
	// Process handles one batch that arrived on the input with the given index (the order of
	// the transform's inputs in the pipeline file) and emits results.
	Process(ctx context.Context, input int, in *schemas.Batch, emit Emit) error
}

// Source reads records with positions. The runner calls Open, then Read and Offsets from one
// goroutine, and Decode from the lanes concurrently.
type Source interface {
	// Open prepares reading from the given offsets. A partition missing from from starts at
	// the source's default position.
	Open(ctx context.Context, from schemas.Offsets) error
	// Read returns the next batch, all of whose records come from one partition, possibly
	// undecoded (Raw set), with one Position per record. It returns io.EOF when a bounded
	// source is exhausted. It may wait for data, but must return promptly, with what it has
	// or with nothing, when ctx is cancelled: the runner cancels it when an epoch is due, and
	// nothing that Read did not return may count in Offsets.
	Read(ctx context.Context) (*schemas.Batch, error)
	// Offsets returns, for every partition read so far, the offset after the last record
	// that Read returned.
	Offsets() schemas.Offsets
	// Decode turns a batch returned by Read into rows on the Main output, and records that
	// cannot be decoded into error rows (or an error when there is no error output).
	Decode(ctx context.Context, b *schemas.Batch, emit Emit) error
	Close() error
}

// Acker is implemented by sources that want to hear when offsets have been committed by every
// sink downstream of them (e.g. to commit a Kafka consumer group).
type Acker interface {
	Ack(ctx context.Context, committed schemas.Offsets) error
}

// Bounded is implemented by unbounded sources that can stop at the end of what is there
// (`sluice run --stop-at-end`): once StopAtEnd was called, before Open, Read returns io.EOF
// after the records that existed when Open ran.
type Bounded interface {
	StopAtEnd()
}

// Paced is implemented by sources that size their reads by how often the run cuts an epoch
// (ReadFromKafka with exactly_once lets a fetch wait a fraction of an epoch for more
// records). The runner calls SetEpochInterval before Open.
type Paced interface {
	SetEpochInterval(time.Duration)
}

// Checkpoint is what a sink stores atomically with its data: which pipeline wrote it, the
// epoch, and for every source partition the sink covers the next offset to read.
type Checkpoint struct {
	Pipeline string          `json:"pipeline"`
	Epoch    uint64          `json:"epoch"`
	Next     schemas.Offsets `json:"next"`
	// State is the windowed operators' state the checkpoint stands on, if any.
	State []byte `json:"state,omitempty"`
	// Lineage says which pipeline spec wrote the commit. Sinks store it with the checkpoint
	// and return it from Open, so a new run can tell whether its spec may resume from it.
	Lineage *Lineage `json:"lineage,omitempty"`
}

// Commit is what the runner asks a sink to commit: the checkpoint to store, and how it came
// about, which is not stored.
type Commit struct {
	Checkpoint
	// From is, for every partition in Next, the offset the records of this commit start at:
	// the sink's previous Next, or where the partition was (re)assigned. A sink that several
	// copies of the pipeline may write (one consumer group, several processes) changes a
	// partition's stored offset only if it still equals From there (compare-and-set), so a
	// copy that lost a partition cannot commit it a second time.
	From schemas.Offsets
	// Fences are, for every source upstream that reads in a Kafka consumer group, who this
	// copy is in the group and the offsets the epoch reaches. A sink that commits in a Kafka
	// transaction commits them to the group inside it, so that the group refuses the
	// transaction of a copy that lost its partitions without knowing it (KIP-447).
	Fences []GroupFence
}

// Moved returns the partitions of Next whose offset differs from From: those this commit
// advanced, or records for the first time.
func (cp Commit) Moved() schemas.Offsets {
	out := schemas.Offsets{}
	for src, parts := range cp.Next {
		for p, next := range parts {
			if from, ok := cp.From.Get(src, p); !ok || from != next {
				out.Set(src, p, next)
			}
		}
	}
	return out
}

// OwnRecord returns what a copy of a pipeline records of this commit in its own checkpoint
// record, when several copies keep one record each (Reloader): its earlier record, with the
// partitions this commit moved set to their new offsets. A copy's record thus holds, per
// partition, the offset of the last commit in which this copy moved it, and never an offset
// it only carried (read from another copy's record at its start): a partition's offsets grow
// from owner to owner, so over all records the highest is the last commit's, even after the
// copy that made it handed the partition over (docs/scaling.md).
func (cp Commit) OwnRecord(earlier schemas.Offsets) schemas.Offsets {
	out := earlier.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			out.Set(src, p, next)
		}
	}
	return out
}

// Lineage is what a commit records of the pipeline spec that made it (docs/upgrades.md).
type Lineage struct {
	// SpecHash identifies the rendered spec, secrets masked.
	SpecHash string `json:"spec_hash,omitempty"`
	// Version is the sluice version.
	Version string `json:"version,omitempty"`
	// GitCommit is the commit of the git work tree holding the pipeline file, if any, and
	// GitDirty whether that tree had uncommitted changes.
	GitCommit string `json:"git_commit,omitempty"`
	GitDirty  bool   `json:"git_dirty,omitempty"`
	// Shape is what an upgrade of the spec must keep to resume from the commit.
	Shape *SpecShape `json:"shape,omitempty"`
}

// SpecShape is the part of a pipeline spec that its checkpoints depend on: what each source reads
// and each sink writes (their Identity), which sources feed each sink, and the stateful
// transforms whose state a checkpoint may hold.
type SpecShape struct {
	Sources  map[string][]string `json:"sources,omitempty"`  // source name -> identity
	Sinks    map[string][]string `json:"sinks,omitempty"`    // sink name -> identity
	Feeds    map[string][]string `json:"feeds,omitempty"`    // sink name -> sources upstream
	Stateful map[string][]string `json:"stateful,omitempty"` // transform name -> identity
}

// Identity is implemented by sources and sinks: what they read or write, as a set of facts
// ("topic events", "group g", "table db.t"). A checkpoint's offsets belong to these facts: a
// new spec whose source lacks one of them (a topic removed, a group changed) cannot resume
// from it; facts only the new spec has (a topic added) start afresh. Options that only tune
// (batch sizes, timeouts) are not facts.
type Identity interface {
	Identity() []string
}

// GroupFence is a copy's membership of a consumer group, with the offsets it commits there.
type GroupFence struct {
	Group      string
	MemberID   string
	Generation int32
	Offsets    schemas.Offsets
}

// SinkInfo is what a sink learns when it opens.
type SinkInfo struct {
	// Pipeline identifies the pipeline in checkpoints.
	Pipeline string
	// Lanes is the number of lanes that will write; Writer is called with 0..Lanes-1.
	Lanes int
	// EpochInterval is how often the run cuts an epoch (the shortest trigger of all sinks, or
	// options.checkpoint_interval): a sink whose transactions span an epoch sizes their
	// timeouts from it.
	EpochInterval time.Duration
	// Instance names this copy of the pipeline when several copies share a consumer group
	// ("" for a single copy). Sinks that keep per-writer state (transactional ids,
	// checkpoint records) key it by Pipeline and Instance.
	Instance string
	// Shared says that several copies of the pipeline write the sink: a source upstream reads
	// in a consumer group.
	Shared bool
	// UnknownCommit is the operator's verdict on an interrupted commit whose outcome the
	// sink cannot learn from its target (`sluice run --bigquery-intent`); "" to stop and ask.
	UnknownCommit CommitVerdict
}

// CommitVerdict is an operator's verdict on a commit whose outcome is unknown.
type CommitVerdict string

// The verdicts.
const (
	AssumeCommitted CommitVerdict = "assume-committed"
	AssumeLost      CommitVerdict = "assume-lost"
)

// Sink writes rows and commits them together with a checkpoint.
type Sink interface {
	// Open prepares the sink and returns the checkpoint it last committed for the pipeline,
	// or nil when it has none.
	Open(ctx context.Context, info SinkInfo) (*Checkpoint, error)
	// Writer returns the writer of one lane.
	Writer(lane int) Writer
	// Commit makes everything flushed for epochs up to cp.Epoch durable and visible,
	// atomically with cp.Checkpoint. Writes of later epochs may run concurrently. Calling it again with
	// an epoch already committed (after a crash) must do nothing. Epoch numbers increase but
	// an epoch may be flushed and never committed (a barrier round in which no record moved):
	// its flushed data, if any, belongs to the next Commit.
	Commit(ctx context.Context, cp Commit) error
	Close(ctx context.Context) error
}

// Reloader is implemented by sinks that several copies of a pipeline may write. When a source
// is given partitions during a run (a consumer group rebalance), the runner reads the sinks'
// checkpoints again, so the partitions start where their last owner committed them.
type Reloader interface {
	// Reload returns the sink's current checkpoint for the pipeline, merged over all copies
	// (per partition, the highest committed offset), or nil when there is none.
	Reload(ctx context.Context) (*Checkpoint, error)
}

// CopiesReloader is implemented by sinks that keep one checkpoint per copy of a pipeline
// (WriteToKafka): a grouping split across copies (Keyed) hands a partition's state over from
// the checkpoint of the copy that last moved it, so the runner needs every copy's.
type CopiesReloader interface {
	// ReloadCopies returns the last checkpoint of every copy of the pipeline, in no order.
	ReloadCopies(ctx context.Context) ([]*Checkpoint, error)
}

// Occupied is implemented by sinks that can tell whether their target already holds data.
// When a sink has no checkpoint of the pipeline, the runner refuses to start on a target that
// holds data unless the run allows resetting state: the data may be this pipeline's output
// whose checkpoint was lost (a deleted checkpoint topic, snapshot summaries rewritten by
// another tool), and starting afresh would write it again. Only an empty target starts from
// the default position.
type Occupied interface {
	// Holds says what the target holds ("topic t holds 15000 records in 3 partitions"), or ""
	// when it is empty. Called after Open.
	Holds(ctx context.Context) (string, error)
	// Claim records, before anything is written, that the pipeline writes the target from
	// now on: a checkpoint of epoch 0 at next, where the sink's sources start. A run that
	// crashes before its first commit then leaves that checkpoint, not data without one
	// (at_least_once writes before it commits). Called when the run goes on after Holds.
	Claim(ctx context.Context, next schemas.Offsets) error
}

// Streaming is implemented by sinks whose rows reach their readers as they are written when
// delivery is at_least_once (WriteToKafka), rather than when their epoch commits.
// Asynchronous progress (options.async_progress_tracking) needs every sink to be one: a sink
// that delivers at its commit would show nothing between two progress writes.
type Streaming interface {
	DeliversAsWritten()
}

// Writer is one lane's side of a sink. A lane calls it serially.
type Writer interface {
	Write(ctx context.Context, b *schemas.Batch) error
	// Flush ends this lane's part of epoch: what was written since the previous Flush
	// belongs to it.
	Flush(ctx context.Context, epoch uint64) error
}

// ErrorWriter is implemented by writers of sinks with error_handling: rows the sink cannot
// write (e.g. cannot encode) go to its error output through emit instead of stopping the
// pipeline. The runner calls WriteWithErrors instead of Write when it is implemented.
type ErrorWriter interface {
	WriteWithErrors(ctx context.Context, b *schemas.Batch, emit Emit) error
}

// Delivery is the delivery guarantee of a pipeline.
type Delivery string

// The delivery guarantees.
const (
	ExactlyOnce Delivery = "exactly_once"
	AtLeastOnce Delivery = "at_least_once"
)

// Options are the runner options a component may need while it is built.
type Options struct {
	// Delivery is the pipeline's guarantee, ExactlyOnce ("" counts as it) or AtLeastOnce. A
	// sink keeps it from its build for Open: SinkInfo does not repeat it.
	Delivery Delivery
	// StateLimit bounds the state of each stateful transform, in bytes: beyond it the
	// pipeline stops with an error rather than swap.
	StateLimit int64
	// IdleTimeout is how long a partition may send nothing before it stops holding the
	// event-time watermark back.
	IdleTimeout time.Duration
}

// Partition names one partition of a source: the Position.Source of its records and its
// number.
type Partition struct {
	Source    string
	Partition int32
}

// Grouped is implemented by sources that can share their partitions with other copies of the
// pipeline (a Kafka consumer group). When Group returns a name, the runner calls
// SetRebalancer before Open, and the source reports partitions moving in and out through it.
type Grouped interface {
	Group() string
	SetRebalancer(Rebalancer)
	// Member returns the source's member id and generation in the group, as it knows them.
	Member() (id string, generation int32)
}

// Rebalancer is how a grouped source hands partitions over without loss or duplicates. Its
// methods may be called from any goroutine, while Read runs.
type Rebalancer interface {
	// Assigned returns where newly assigned partitions start: the offsets the sinks
	// downstream have committed for them, read anew, since another copy may have committed
	// them since the run began. A partition missing from the result starts at the source's
	// default position.
	Assigned(ctx context.Context, parts []Partition) (schemas.Offsets, error)
	// Revoked returns once every record that Read returned from parts is committed by every
	// sink downstream; the run then forgets the partitions. Before calling it the source must
	// stop returning records of parts from Read. It returns at once when the run is over.
	Revoked(ctx context.Context, parts []Partition) error
	// Lost reports partitions taken away without a chance to commit (the source's group
	// session expired, or cause): their records read since the last commit may now be
	// another copy's, so the run stops without committing them.
	Lost(parts []Partition, cause error)
}

// CheckpointReader is implemented by sinks whose last checkpoint can be read without opening
// them (`sluice status`): nothing is created, fenced or written.
type CheckpointReader interface {
	// ReadCheckpoint returns the sink's last checkpoint of pipeline, merged over the copies of
	// the pipeline, and when it was committed; nil when the sink has none.
	ReadCheckpoint(ctx context.Context, pipeline string) (*Checkpoint, time.Time, error)
}

// EndOffsets is implemented by sources that can say where their partitions end now, in the
// offsets of Position (`sluice status` shows the lag of the sinks' checkpoints with it).
type EndOffsets interface {
	EndOffsets(ctx context.Context) (schemas.Offsets, error)
}

// Keyed is implemented by stateful transforms whose state splits by a key of their input rows
// (Combine, GroupByKey, Join): across copies of a pipeline the runner sends the rows of one
// key through one partition of a repartition topic, and each copy keeps the state of the
// partitions it owns, handed over with them (docs/scaling.md).
type Keyed interface {
	Stateful
	// AppendKey appends the encoding of the grouping key of row, which came on input: rows
	// whose keys encode equal belong to one group.
	AppendKey(dst []byte, input int, row schemas.Row) ([]byte, error)
	// SplitBy keeps the state per partition of source (a Position.Source): a task per
	// partition with its own windows and watermark. Called before Restore.
	SplitBy(source string)
	// Revoke sets the tasks of partitions given up aside: their last state stays in every
	// snapshot, for their next owner to take from this copy's checkpoint.
	Revoke(parts []int32)
	// Adopt gives partition part the task chosen from the copies' checkpoints (nil: a new
	// task).
	Adopt(part int32, task *Task) error
	// Tasks decodes the tasks of a snapshot.
	Tasks(snapshot []byte) (map[int32]Task, error)
}

// Task is the state of one partition of a Keyed transform in a snapshot: Next is the offset
// of the partition its state covers, Fired the offset after its last result (Stateful.Fired).
// Of the copies' snapshots, the task with the highest (Next, Fired) is the partition's last.
type Task struct {
	Next, Fired int64
	State       []byte
}

// Stateful is implemented by transforms that keep state across epochs: windowed Combine and
// GroupByKey. Process adds a batch to the state and may run on several lanes at once. When
// every lane has reached a barrier, the runner calls Fire and then Snapshot on its
// coordinator while the lanes wait; the snapshot goes into the sinks' checkpoints
// (Checkpoint.State), and Restore hands it back before a resumed run starts.
type Stateful interface {
	Transform
	// Fire emits on the Main output the results of the windows the watermark has closed, or
	// of every window when final (the input ended). upstream holds the partitions of the
	// sources upstream at the barrier: one that sent nothing yet holds the watermark back
	// (until it goes idle). A result is positioned under the transform's own source name,
	// partition 0, with its window's end in milliseconds as offset, so a sink that already
	// committed it drops it after a restore.
	Fire(ctx context.Context, upstream schemas.Offsets, final bool, emit Emit) error
	// Fired returns the offsets of the results fired so far, for the sinks' checkpoints.
	Fired() schemas.Offsets
	Snapshot() ([]byte, error)
	Restore(state []byte) error
	// Stats returns the size of the state in bytes (an estimate) and how many records came
	// too late for their windows so far.
	Stats() (stateBytes int, late int64)
}
