package bigquery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicehq/sluice/component"
)

// ReadCheckpoint returns the checkpoint in the sink's state files for pipeline, merged over
// the copies that ran in this checkpoint_dir (per partition, the highest offset), and when it
// was last saved, without touching BigQuery. A commit a crash interrupted is not settled here:
// the checkpoint shown is the one before it until a run settles it.
func (s *sink) ReadCheckpoint(_ context.Context, pipeline string) (*component.Checkpoint, time.Time, error) {
	single := stateFileFor(s.stateDir(), pipeline, s.p.name, "")
	copies, err := filepath.Glob(filepath.Join(filepath.Dir(single.path), safeName(s.p.name)+"@*.json"))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	var cp *component.Checkpoint
	var at time.Time
	for _, path := range append([]string{single.path}, copies...) {
		st, err := stateFile{path: path}.load()
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
		}
		if st == nil || st.Epoch == 0 {
			continue
		}
		if fi, err := os.Stat(path); err == nil && fi.ModTime().After(at) {
			at = fi.ModTime()
		}
		if cp == nil {
			cp = &component.Checkpoint{Pipeline: pipeline, Epoch: st.Epoch, Next: st.Next.Clone()}
			continue
		}
		cp.Epoch = max(cp.Epoch, st.Epoch)
		cp.Next = cp.Next.Advance(st.Next)
	}
	return cp, at, nil
}
