package bigquery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicehq/sluice/component"
)

// ReadCheckpoint returns the sink's checkpoint of pipeline, merged over its copies (per
// partition, the highest offset), and when it was last saved, without touching BigQuery. A
// commit a crash interrupted is not settled here: the checkpoint shown is the one before it
// until a run settles it.
func (s *sink) ReadCheckpoint(ctx context.Context, pipeline string) (*component.Checkpoint, time.Time, error) {
	states, err := s.readStates(ctx, pipeline)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	var cp *component.Checkpoint
	var at time.Time
	for _, st := range states {
		if st == nil || st.Epoch == 0 {
			continue
		}
		if st.savedAt.After(at) {
			at = st.savedAt
		}
		if cp == nil {
			cp = &component.Checkpoint{Pipeline: pipeline, Epoch: st.Epoch, Next: st.Next.Clone(), Lineage: st.Lineage}
			continue
		}
		if st.Epoch > cp.Epoch {
			cp.Epoch, cp.Lineage = st.Epoch, st.Lineage
		}
		cp.Next.Advance(st.Next)
	}
	return cp, at, nil
}

// readStates returns the states of every copy of the sink: from the checkpoint store, or from
// the files of checkpoint_dir.
func (s *sink) readStates(ctx context.Context, pipeline string) ([]*state, error) {
	if s.inStore() {
		m, err := loadStates(ctx, s.cs, storeKey(pipeline, s.p.name))
		if err != nil {
			return nil, err
		}
		out := make([]*state, 0, len(m))
		for _, st := range m {
			out = append(out, st)
		}
		return out, nil
	}
	single := stateFileFor(s.stateDir(), pipeline, s.p.name, "")
	copies, err := filepath.Glob(filepath.Join(filepath.Dir(single.path), safeName(s.p.name)+"@*.json"))
	if err != nil {
		return nil, err
	}
	var out []*state
	for _, path := range append([]string{single.path}, copies...) {
		st, err := stateFile{path: path}.read()
		if err != nil {
			return nil, err
		}
		if st == nil {
			continue
		}
		if fi, err := os.Stat(path); err == nil {
			st.savedAt = fi.ModTime()
		}
		out = append(out, st)
	}
	return out, nil
}
