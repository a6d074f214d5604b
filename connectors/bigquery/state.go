package bigquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// state is what the sink keeps between runs, per pipeline, sink and copy: the checkpoint it
// last committed and, while a commit is under way, the intent of that commit. BigQuery commits
// the rows (BatchCommitWriteStreams) and the state file records what the rows stand on; the
// intent, written before the commit, joins the two: after a crash its streams say whether the
// commit happened (recover.go).
type state struct {
	Pipeline string          `json:"pipeline"`
	Table    string          `json:"table,omitempty"` // project.dataset.table
	Epoch    uint64          `json:"epoch"`
	Next     schemas.Offsets `json:"next"`
	State    []byte          `json:"state,omitempty"`
	Intent   *intent         `json:"intent,omitempty"`
	// Lineage is the spec that wrote the checkpoint (component.Lineage).
	Lineage *component.Lineage `json:"lineage,omitempty"`
	// Settled are the interrupted commits of other copies that this copy settled, by their
	// copy's key, so that every copy (and the copy itself) keeps the decision, which a later
	// look might make otherwise (a count over rows written since).
	Settled map[string]verdict `json:"settled,omitempty"`

	savedAt time.Time // when it was saved, if the store says
}

// verdict is the settlement of a commit intent: its epoch, and whether it committed.
type verdict struct {
	Epoch     uint64 `json:"epoch"`
	Committed bool   `json:"committed"`
}

// settledAs returns the verdict that one of states recorded on the intent of epoch of the
// copy key, if any.
func settledAs(key string, epoch uint64, states ...*state) (verdict, bool) {
	for _, st := range states {
		if v, ok := st.Settled[key]; ok && v.Epoch == epoch {
			return v, true
		}
	}
	return verdict{}, false
}

// intent is a commit under way: the epoch, its finalized streams and the checkpoint the table
// stands on once they are committed. The checkpoint before it is the state's own.
type intent struct {
	Epoch   uint64             `json:"epoch"`
	Streams []string           `json:"streams"`
	Rows    int64              `json:"rows"`
	Written schemas.Offsets    `json:"written,omitempty"` // per partition, the offset of the commit's first row
	Next    schemas.Offsets    `json:"next"`
	State   []byte             `json:"state,omitempty"`
	At      time.Time          `json:"at"`
	Lineage *component.Lineage `json:"lineage,omitempty"`
}

// stateStore keeps the sink's state: in the checkpoint store of a Kafka source upstream
// (kafkaState), or in a file (stateFile).
type stateStore interface {
	// load returns this copy's state, nil when it has none, and those of the other copies of
	// the pipeline (a shared store only), keyed by where they are kept.
	load(ctx context.Context) (own *state, others map[string]*state, err error)
	// self is this copy's key among the others of the other copies ("" without them).
	self() string
	// save replaces this copy's state; fences refuse it when the copy lost its partitions.
	save(ctx context.Context, st *state, fences []component.GroupFence) error
	where() string
	close() error
}

// kafkaState keeps the states of every copy of the sink in a component.CheckpointStore.
type kafkaState struct {
	store component.CheckpointStore
	w     component.CheckpointWriter
	sink  string // pipeline/sink, the key of a single copy
	key   string // this copy's
}

// openKafkaState opens this copy's writer of the sink's states, which fences an earlier run of
// the copy.
func openKafkaState(ctx context.Context, store component.CheckpointStore, pipeline, sink, instance string) (*kafkaState, error) {
	ks := &kafkaState{store: store, sink: storeKey(pipeline, sink)}
	w, err := store.Writer(ctx, ks.sink, instance)
	if err != nil {
		return nil, fmt.Errorf("open the checkpoint store (%s): %w", store.Where(), err)
	}
	ks.w, ks.key = w, w.Key()
	return ks, nil
}

func (k *kafkaState) load(ctx context.Context) (*state, map[string]*state, error) {
	all, err := loadStates(ctx, k.store, k.sink)
	if err != nil {
		return nil, nil, err
	}
	own := all[k.key]
	delete(all, k.key)
	return own, all, nil
}

// storeKey is the key of a sink's states in a checkpoint store, without a copy's instance.
func storeKey(pipeline, sink string) string { return pipeline + "/" + sink }

// loadStates returns the states of every copy of sink (pipeline/sink) in store, each with the
// time it was saved.
func loadStates(ctx context.Context, store component.CheckpointStore, sink string) (map[string]*state, error) {
	stored, err := store.Load(ctx, sink)
	if err != nil {
		return nil, fmt.Errorf("read the checkpoint store (%s): %w", store.Where(), err)
	}
	out := make(map[string]*state, len(stored))
	for key, v := range stored {
		st := new(state)
		if err := json.Unmarshal(v.Value, st); err != nil {
			return nil, fmt.Errorf("the BigQuery sink's state %s in %s is damaged: %w", key, store.Where(), err)
		}
		st.savedAt = v.At
		out[key] = st
	}
	return out, nil
}

func (k *kafkaState) save(ctx context.Context, st *state, fences []component.GroupFence) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode the BigQuery sink's state: %w", err)
	}
	if err := k.w.Save(ctx, data, fences); err != nil {
		return fmt.Errorf("save the BigQuery sink's state: %w", err)
	}
	return nil
}

func (k *kafkaState) where() string { return k.key + " in " + k.store.Where() }

func (k *kafkaState) self() string { return k.key }

func (k *kafkaState) close() error { return k.w.Close() }

// stateFile keeps a state in one file, replaced atomically and fsynced, so that a crash leaves
// either the old or the new state. It has no other copies: several copies of a pipeline
// cannot share a machine's directory.
type stateFile struct{ path string }

func (f stateFile) load(context.Context) (*state, map[string]*state, error) {
	st, err := f.read()
	return st, nil, err
}

func (f stateFile) save(_ context.Context, st *state, _ []component.GroupFence) error {
	return f.write(st)
}

func (f stateFile) where() string { return f.path }

func (stateFile) self() string { return "" }

func (stateFile) close() error { return nil }

// stateFileFor is the state file of a sink of a pipeline, for one copy (instance "" for a
// single copy).
func stateFileFor(dir, pipeline, sink, instance string) stateFile {
	name := sink
	if instance != "" {
		name += "@" + instance
	}
	return stateFile{path: filepath.Join(dir, safeName(pipeline), safeName(name)+".json")}
}

// safeName keeps letters, digits, '-', '_', '.' and '@' of s and replaces the rest by '_'.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '@') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}

// read returns the state, or nil when none was saved.
func (f stateFile) read() (*state, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the BigQuery sink's state: %w", err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("the BigQuery sink's state %s is damaged: %w", f.path, err)
	}
	return &st, nil
}

// write replaces the state: written to a temporary file, fsynced, renamed over the old one,
// and the directory fsynced.
func (f stateFile) write(st *state) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode the BigQuery sink's state: %w", err)
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the BigQuery sink's state directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return fmt.Errorf("save the BigQuery sink's state: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("save the BigQuery sink's state: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("save the BigQuery sink's state: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("save the BigQuery sink's state: %w", err)
	}
	return nil
}
