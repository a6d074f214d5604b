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
	// expect is, per partition the epoch moved, the offset the table must still hold
	// (compare-and-set); a partition it lacks must be absent from the table.
	expect schemas.Offsets
}

// commitRouted commits an epoch to the routed tables that got rows (todo, in the order of
// their names; the last one marks the epoch complete).
//
// Several copies may write the same tables, so the offsets are compared per table (a table
// that got no rows for a while holds older offsets than the epoch starts from): a table
// records, per partition, how far it holds the partition's rows (the table's offsets), and a
// commit that moves a partition must find there what this copy knows of it
// (tableState.covered): what the table held when the partition came to this copy (Open, or the
// Reload of the rebalance that gave it), moved by this copy's own commits since. The writers
// dropped the rows below the same offsets. A copy that lost the partition meanwhile (a
// zombie) finds the new owner's offsets in any table the new owner committed since, and
// fails; the new owner, finding a zombie's commit, fails too, and its next run drops what the
// zombie wrote.
func (s *sink) commitRouted(ctx context.Context, todo []*tableState, cp component.Commit) error {
	s.mu.Lock()
	own := cp.OwnRecord(s.own)
	expects := make([]schemas.Offsets, len(todo))
	for i, ts := range todo {
		expects[i] = expectFor(ts, cp)
	}
	s.mu.Unlock()
	for i, ts := range todo {
		tc := &tableCommit{complete: i == len(todo)-1, own: own, expect: expects[i]}
		if err := s.commitTable(ctx, ts, cp, tc); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(todo) > 0 {
		s.marked = todo[len(todo)-1].name
		s.own = own
	}
	s.lastNext = cp.Next.Clone()
	return nil
}

// expectFor returns what the table of ts must hold of each partition cp moved; under sink.mu.
func expectFor(ts *tableState, cp component.Commit) schemas.Offsets {
	if cp.From == nil {
		return nil
	}
	out := schemas.Offsets{}
	for src, parts := range cp.Moved() {
		for p := range parts {
			if v, ok := ts.covered.Get(src, p); ok {
				out.Set(src, p, v)
			}
		}
	}
	return out
}

// recordRouted notes what ts holds after this copy committed cp to it; under sink.mu.
func recordRouted(ts *tableState, cp component.Commit, tc *tableCommit) {
	covered := ts.covered.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			if v, ok := tc.expect.Get(src, p); ok {
				next = max(next, v)
			}
			covered.Set(src, p, next)
		}
	}
	ts.covered = covered // replaced, never changed: writers read it without the lock
}

// refreshCovered takes, at a rebalance, what the table rt holds of the partitions that may have
// come to this copy: those whose offset in the merged checkpoint next is not where this
// copy's last commit left them (lastNext), and those the checkpoint lacks. The partitions
// this copy kept keep what it knows: a copy that lost one of them without knowing it may
// have committed since, and adopting its offsets would hide it from the next commit's
// comparison while the writers hold rows it also wrote. Under sink.mu.
func refreshCovered(ts *tableState, rt routedTable, next, lastNext schemas.Offsets) {
	kept := func(src string, p int32) bool {
		n, ok := next.Get(src, p)
		last, lastOK := lastNext.Get(src, p)
		return ok && lastOK && n == last
	}
	covered := ts.covered.Clone()
	for src, parts := range rt.newest.offsets {
		for p, v := range parts {
			if !kept(src, p) {
				covered.Set(src, p, v)
			}
		}
	}
	for src, parts := range ts.covered {
		for p := range parts {
			if _, ok := rt.newest.offsets.Get(src, p); !ok && !kept(src, p) {
				covered.Delete(src, p)
			}
		}
	}
	ts.covered, ts.tbl = covered, rt.tbl // replaced, never changed: writers read it unlocked
}

// coveredOf returns the offsets below which ts holds every row already (routing).
func (s *sink) coveredOf(ts *tableState) schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ts.covered
}
