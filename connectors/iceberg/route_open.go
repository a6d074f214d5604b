package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// routedTable is a table of the routing pattern that holds commits of the pipeline.
type routedTable struct {
	name   string
	tbl    *table.Table
	newest *stored // the pipeline's newest commit to it
	marked *stored // the newest of them that completed an epoch, if any
}

// routedTables lists the tables of the namespace whose names the routing pattern can make,
// and returns those holding commits of pipeline. They are found by listing, not by a
// registry: a table exists once its first commit is in the catalog.
func (s *sink) routedTables(ctx context.Context, cat catalog.Catalog, pipeline string) ([]routedTable, error) {
	r := s.plan.route
	var out []routedTable
	for ident, err := range cat.ListTables(ctx, r.namespace) {
		if errors.Is(err, catalog.ErrNoSuchNamespace) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list the tables of namespace %s: %w", strings.Join(r.namespace, "."), err)
		}
		if len(ident) == 0 || !r.match.MatchString(ident[len(ident)-1]) {
			continue
		}
		name := strings.Join(ident, ".")
		tbl, err := cat.LoadTable(ctx, ident)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue // dropped since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("load table %s: %w", name, err)
		}
		rt := routedTable{name: name, tbl: tbl}
		err = history(tbl.Metadata(), pipeline, func(st stored) bool {
			if rt.newest == nil {
				rt.newest = &st
			}
			if st.complete {
				rt.marked = &st
			}
			return rt.marked == nil
		})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		if rt.newest != nil {
			out = append(out, rt)
		}
	}
	slices.SortFunc(out, func(a, b routedTable) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// routedCheckpoint returns the checkpoint of the routed tables: the offsets and state of the
// newest complete epoch (every table committed its rows up to there), numbered as the
// newest epoch any table holds, so that epochs never repeat. Without a complete epoch the
// offsets are empty: sources start from their default position, and each table drops what
// it holds. It also returns the tables and the one carrying the newest complete epoch.
func (s *sink) routedCheckpoint(ctx context.Context, cat catalog.Catalog, pipeline string) (*component.Checkpoint, []routedTable, *routedTable, error) {
	tables, err := s.routedTables(ctx, cat, pipeline)
	if err != nil || len(tables) == 0 {
		return nil, nil, nil, err
	}
	cp := &component.Checkpoint{Pipeline: pipeline, Next: schemas.Offsets{}}
	var mark *routedTable
	for i, rt := range tables {
		cp.Epoch = max(cp.Epoch, rt.newest.epoch)
		if rt.marked != nil && (mark == nil || rt.marked.epoch > mark.marked.epoch) {
			mark = &tables[i]
		}
	}
	if mark != nil {
		cp.Next, cp.State = mark.marked.offsets.Clone(), mark.marked.state
	}
	return cp, tables, mark, nil
}

// openRouted opens the routed tables the pipeline committed to; the others are prepared when
// a row first names them.
func (s *sink) openRouted(ctx context.Context, cat catalog.Catalog, pipeline string) (map[string]*tableState, *component.Checkpoint, string, error) {
	cp, found, mark, err := s.routedCheckpoint(ctx, cat, pipeline)
	if err != nil {
		return nil, nil, "", err
	}
	tables := map[string]*tableState{}
	for _, rt := range found {
		ts, err := s.prepare(ctx, cat, rt.name)
		if err != nil {
			return nil, nil, "", err
		}
		ts.last, ts.covered = rt.newest.epoch, rt.newest.offsets.Clone()
		tables[rt.name] = ts
	}
	var marked string
	if mark != nil {
		marked = mark.name
	}
	return tables, cp, marked, nil
}

// readRoutedCheckpoint is ReadCheckpoint with routing: the routed tables' checkpoint and the
// time of the commit that completed its epoch.
func (s *sink) readRoutedCheckpoint(ctx context.Context, cat catalog.Catalog, pipeline string) (*component.Checkpoint, time.Time, error) {
	cp, _, mark, err := s.routedCheckpoint(ctx, cat, pipeline)
	if err != nil || mark == nil {
		return cp, time.Time{}, err
	}
	var at time.Time
	if snap := mark.tbl.Metadata().SnapshotByID(mark.marked.snapshotID); snap != nil {
		at = time.UnixMilli(snap.TimestampMs)
	}
	return cp, at, nil
}
