package bigquery

import (
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
}

// intent is a commit under way: the epoch, its finalized streams and the checkpoint the table
// stands on once they are committed. The checkpoint before it is the state's own.
type intent struct {
	Epoch   uint64             `json:"epoch"`
	Streams []string           `json:"streams"`
	Rows    int64              `json:"rows"`
	Next    schemas.Offsets    `json:"next"`
	State   []byte             `json:"state,omitempty"`
	At      time.Time          `json:"at"`
	Lineage *component.Lineage `json:"lineage,omitempty"`
}

// stateFile keeps a state in one file, replaced atomically and fsynced, so that a crash leaves
// either the old or the new state.
type stateFile struct{ path string }

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

// load returns the state, or nil when none was saved.
func (f stateFile) load() (*state, error) {
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

// save replaces the state: written to a temporary file, fsynced, renamed over the old one, and
// the directory fsynced.
func (f stateFile) save(st *state) error {
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
