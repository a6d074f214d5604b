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
	newest *stored // the pipeline's newest commit to it, by any copy: what the table holds
	// marks are every copy's newest commit to it that completed an epoch, by instance.
	marks map[string]*stored
	// ownEpoch is the newest epoch this copy committed to it.
	ownEpoch uint64
}

// routedTables lists the tables of the namespace whose names the routing pattern can make,
// and returns those holding commits of pipeline, read for the copy instance. They are found
// by listing, not by a registry: a table exists once its first commit is in the catalog.
func (s *sink) routedTables(ctx context.Context, cat catalog.Catalog, pipeline, instance string) ([]routedTable, error) {
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
		rt, err := readRouted(name, tbl, pipeline, instance)
		if err != nil {
			return nil, err
		}
		if rt.newest != nil {
			out = append(out, rt)
		}
	}
	slices.SortFunc(out, func(a, b routedTable) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// readRouted reads what a routed table holds of pipeline: its newest commit and every copy's
// newest complete mark (the walk covers the whole history, since copies are not known
// beforehand; expiry keeps it short).
func readRouted(name string, tbl *table.Table, pipeline, instance string) (routedTable, error) {
	rt := routedTable{name: name, tbl: tbl, marks: map[string]*stored{}}
	err := history(tbl.Metadata(), pipeline, func(st stored) bool {
		if rt.newest == nil {
			rt.newest = &st
		}
		if st.instance == instance {
			rt.ownEpoch = max(rt.ownEpoch, st.epoch)
		}
		if st.complete && rt.marks[st.instance] == nil {
			rt.marks[st.instance] = &st
		}
		return true
	})
	if err != nil {
		return rt, fmt.Errorf("table %s: %w", name, err)
	}
	return rt, nil
}

// routedMark is a copy's newest complete epoch and the table holding its mark.
type routedMark struct {
	table *routedTable
	st    *stored
}

// routedCheckpoint returns the checkpoint of the routed tables for the copy instance. Each
// copy's newest complete epoch (every table holds that copy's rows up to there) carries its
// own record; a partition resumes at the highest offset over those records, the last
// complete commit that moved it (docs/scaling.md). The epoch is the newest this copy
// committed to any table, so that its epochs never repeat; the state is of its own newest
// complete epoch. Without a complete epoch the offsets are empty: sources start from their
// default position, and each table drops what it holds. It also returns the tables and this
// copy's newest mark (its table is where an epoch without rows records its offsets).
func (s *sink) routedCheckpoint(ctx context.Context, cat catalog.Catalog, pipeline, instance string) (*component.Checkpoint, []routedTable, *routedMark, error) {
	tables, err := s.routedTables(ctx, cat, pipeline, instance)
	if err != nil || len(tables) == 0 {
		return nil, nil, nil, err
	}
	cp := &component.Checkpoint{Pipeline: pipeline, Next: schemas.Offsets{}}
	newest := map[string]routedMark{} // by instance
	for i := range tables {
		rt := &tables[i]
		cp.Epoch = max(cp.Epoch, rt.ownEpoch)
		for inst, st := range rt.marks {
			if m, ok := newest[inst]; !ok || st.epoch > m.st.epoch {
				newest[inst] = routedMark{table: rt, st: st}
			}
		}
	}
	for _, m := range newest {
		cp.Next.Advance(m.st.own)
	}
	own, ok := newest[instance]
	if !ok {
		return cp, tables, nil, nil
	}
	cp.Lineage = own.st.lineage
	if cp.State, err = loadState(ctx, own.table.tbl, own.st); err != nil {
		return nil, nil, nil, fmt.Errorf("table %s: %w", own.table.name, err)
	}
	return cp, tables, &own, nil
}

// openRouted opens the routed tables the pipeline committed to; the others are prepared when
// a row first names them. It returns this copy's own record and the table of its newest mark.
func (s *sink) openRouted(ctx context.Context, cat catalog.Catalog, pipeline, instance string) (map[string]*tableState, *component.Checkpoint, *routedMark, error) {
	cp, found, mark, err := s.routedCheckpoint(ctx, cat, pipeline, instance)
	if err != nil {
		return nil, nil, nil, err
	}
	tables := map[string]*tableState{}
	for _, rt := range found {
		ts, err := s.prepare(ctx, cat, rt.name)
		if err != nil {
			return nil, nil, nil, err
		}
		ts.last = rt.ownEpoch
		ts.covered = rt.newest.offsets.Clone()
		if mark != nil && mark.table.name == rt.name {
			s.trackStateFile(ts, mark.st.stateFile)
		}
		tables[rt.name] = ts
	}
	return tables, cp, mark, nil
}

// readRoutedCheckpoint is ReadCheckpoint with routing: the routed tables' checkpoint (of a
// single copy, or every copy's records merged) and the time of the newest commit that
// completed an epoch.
func (s *sink) readRoutedCheckpoint(ctx context.Context, cat catalog.Catalog, pipeline string) (*component.Checkpoint, time.Time, error) {
	cp, tables, _, err := s.routedCheckpoint(ctx, cat, pipeline, "")
	if err != nil {
		return cp, time.Time{}, err
	}
	var at time.Time
	for _, rt := range tables {
		for _, st := range rt.marks {
			if snap := rt.tbl.Metadata().SnapshotByID(st.snapshotID); snap != nil && time.UnixMilli(snap.TimestampMs).After(at) {
				at = time.UnixMilli(snap.TimestampMs)
			}
		}
	}
	return cp, at, nil
}

// reloadRouted reads, at a rebalance, what each routed table holds (tableState.covered: the
// rows the writers drop) and returns the merged checkpoint. Tables another copy created
// since are prepared.
func (s *sink) reloadRouted(ctx context.Context, cat catalog.Catalog, pipeline, instance string) (*component.Checkpoint, error) {
	cp, found, _, err := s.routedCheckpoint(ctx, cat, pipeline, instance)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	for _, rt := range found {
		ts, err := s.tableFor(ctx, rt.name)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		// covered is replaced, never changed: writers hold the old one. The table is the one
		// it was read from, so that the next commit compares against the same state.
		ts.covered, ts.tbl = rt.newest.offsets.Clone(), rt.tbl
		s.mu.Unlock()
	}
	return cp, nil
}

// adoptRouted reads, for a routed table prepared at its first use, what it holds of the
// pipeline: another copy may have committed to it since this one opened.
func (s *sink) adoptRouted(ts *tableState) error {
	s.mu.Lock()
	pipeline, instance := s.pipeline, s.instance
	s.mu.Unlock()
	rt, err := readRouted(ts.name, ts.tbl, pipeline, instance)
	if err != nil || rt.newest == nil {
		return err
	}
	ts.last, ts.covered = rt.ownEpoch, rt.newest.offsets.Clone()
	return nil
}
