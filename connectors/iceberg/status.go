package iceberg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/sluicehq/sluice/component"
)

// ReadCheckpoint returns the newest checkpoint of pipeline in the table's history and the time
// of its snapshot, without creating or changing anything; nil when the table does not exist
// or holds no commit of the pipeline. With routing: the routed tables' complete epoch.
func (s *sink) ReadCheckpoint(ctx context.Context, pipeline string) (*component.Checkpoint, time.Time, error) {
	ident, err := identifier(s.cfg.Table)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	cat, err := openCatalog(ctx, s.cfg)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
	}
	defer closeCatalog(cat)
	if s.plan.route != nil {
		cp, at, err := s.readRoutedCheckpoint(ctx, cat, pipeline)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("%s: %w", s.what, err)
		}
		return cp, at, nil
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: load table %s: %w", s.what, s.cfg.Table, err)
	}
	st, err := latest(tbl.Metadata(), pipeline)
	if err != nil || st == nil {
		return nil, time.Time{}, err
	}
	var at time.Time
	if snap := tbl.Metadata().SnapshotByID(st.snapshotID); snap != nil {
		at = time.UnixMilli(snap.TimestampMs)
	}
	cp, err := checkpointWithState(ctx, tbl, pipeline, st)
	return cp, at, err
}
