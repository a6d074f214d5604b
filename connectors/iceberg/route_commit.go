package iceberg

import (
	"context"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// tableCommit is, with routing, what one table's commit of an epoch checks and records.
type tableCommit struct {
	// complete marks the epoch complete: the last table committed for it.
	complete bool
	// own is the copy's own record after the epoch (Commit.OwnRecord), in every table's
	// snapshot of the epoch; Open reads it from the copy's newest complete mark.
	own schemas.Offsets
	// checked are the partitions whose rows this copy wrote to the table in the epochs
	// committed, and expect the offset each must still have in the table (absent: the table
	// must lack it): the one below which the writers dropped the partition's rows.
	checked, expect schemas.Offsets
}

// noOffset stands, in tableState.wrote, for a partition the table held nothing of.
const noOffset = -1

// commitRouted commits an epoch to the routed tables that got rows (todo, in the order of
// their names; the last one marks the epoch complete).
//
// Several copies may write the same tables, so the offsets are compared per table (a table
// that got no rows for a while holds older offsets than the epoch starts from): a table
// records, per partition, how far it holds the partition's rows (the table's offsets). The
// writers drop a row below that offset as they know it (tableState.covered: read at Open and
// at every Reload, moved by this copy's commits) and note, per epoch, the offset under which
// they wrote each partition's first row to the table (tableState.wrote). A commit that moves
// a partition it wrote rows of must find the table still there: anything another copy
// committed of it since (a zombie, or an epoch of a copy that died half-way) would overlap
// them. A partition without rows in the table is not compared: nothing of it can overlap.
func (s *sink) commitRouted(ctx context.Context, todo []*tableState, cp component.Commit) error {
	s.mu.Lock()
	own := cp.OwnRecord(s.own)
	tcs := make([]*tableCommit, len(todo))
	for i, ts := range todo {
		tcs[i] = wroteUnder(ts, cp)
		tcs[i].own, tcs[i].complete = own, i == len(todo)-1
	}
	s.mu.Unlock()
	for i, ts := range todo {
		if err := s.commitTable(ctx, ts, cp, tcs[i]); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(todo) > 0 {
		s.marked = todo[len(todo)-1].name
		s.own = own
	}
	return nil
}

// wroteUnder returns the comparison of cp's commit to ts: the partitions cp moved whose rows
// the writers wrote to ts in the epochs it commits, each with the lowest offset they wrote
// under; under sink.mu.
func wroteUnder(ts *tableState, cp component.Commit) *tableCommit {
	tc := &tableCommit{checked: schemas.Offsets{}, expect: schemas.Offsets{}}
	if cp.From == nil {
		return tc
	}
	for src, parts := range cp.Moved() {
		for p := range parts {
			for e, wrote := range ts.wrote {
				v, ok := wrote.Get(src, p)
				if e > cp.Epoch || !ok {
					continue
				}
				if low, seen := tc.checked.Get(src, p); !seen || v < low {
					tc.checked.Set(src, p, v)
				}
			}
			if v, ok := tc.checked.Get(src, p); ok && v != noOffset {
				tc.expect.Set(src, p, v)
			}
		}
	}
	return tc
}

// noteWrote records that a lane wrote rows of the partitions in parts (with the offsets of
// covered then) to ts in epoch.
func (s *sink) noteWrote(ts *tableState, epoch uint64, covered schemas.Offsets, parts map[schemas.Position]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts.wrote == nil {
		ts.wrote = map[uint64]schemas.Offsets{}
	}
	w := ts.wrote[epoch]
	if w == nil {
		w = schemas.Offsets{}
		ts.wrote[epoch] = w
	}
	for pp := range parts {
		v, ok := covered.Get(pp.Source, pp.Partition)
		if !ok {
			v = noOffset
		}
		if low, seen := w.Get(pp.Source, pp.Partition); !seen || v < low {
			w.Set(pp.Source, pp.Partition, v)
		}
	}
}

// recordRouted notes what ts holds after this copy committed cp to it; under sink.mu. Rows
// of later epochs already written start where this commit ends, so what they were written
// under moves with it.
func recordRouted(ts *tableState, cp component.Commit, tc *tableCommit) {
	covered := ts.covered.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			if v, ok := tc.expect.Get(src, p); ok {
				next = max(next, v)
			}
			next = max(next, offsetOr(covered, src, p))
			covered.Set(src, p, next)
			for e, wrote := range ts.wrote {
				if _, ok := wrote.Get(src, p); ok && e > cp.Epoch {
					wrote.Set(src, p, next)
				}
			}
		}
	}
	for e := range ts.wrote {
		if e <= cp.Epoch {
			delete(ts.wrote, e)
		}
	}
	ts.covered = covered // replaced, never changed: writers read it without the lock
}

// offsetOr returns o's offset of src and p, or 0.
func offsetOr(o schemas.Offsets, src string, p int32) int64 {
	v, _ := o.Get(src, p)
	return v
}

// coveredOf returns the offsets below which ts holds every row already (routing).
func (s *sink) coveredOf(ts *tableState) schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ts.covered
}
