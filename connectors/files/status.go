package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicehq/sluice/component"
)

// ReadCheckpoint returns the checkpoint of the newest committed epoch in the output directory
// and when it was committed (its directory's modification time), without touching anything.
func (s *sink) ReadCheckpoint(_ context.Context, pipeline string) (*component.Checkpoint, time.Time, error) {
	if _, err := os.Stat(s.dir); notExist(err) {
		return nil, time.Time{}, nil
	}
	epochs, err := committedEpochs(s.dir)
	if err != nil || len(epochs) == 0 {
		return nil, time.Time{}, err
	}
	edir := filepath.Join(s.dir, epochName(epochs[len(epochs)-1]))
	cp, err := readCheckpoint(edir)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	if cp.Pipeline != pipeline {
		return nil, time.Time{}, fmt.Errorf("%s %s holds the output of pipeline %q, not of %q", s.what, s.dir, cp.Pipeline, pipeline)
	}
	fi, err := os.Stat(edir)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	return cp, fi.ModTime(), nil
}
