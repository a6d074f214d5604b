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
// commit that moves a partition must find there what this copy last saw of it: its own last
// commit to the table while it kept the partition, or what the table held when the partition
// came to it (Open, Reload), which is also below what the writers dropped. A copy that lost
// the partition meanwhile (a zombie) finds the new owner's offsets and fails; the new owner
// finding a zombie's commit fails too, and its next run drops what the zombie wrote.
func (s *sink) commitRouted(ctx context.Context, todo []*tableState, cp component.Commit) error {
	s.mu.Lock()
	own := cp.OwnRecord(s.own)
	expects := make([]schemas.Offsets, len(todo))
	for i, ts := range todo {
		expects[i] = s.expectFor(ts, cp)
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
// A partition this copy kept since its last commit (that commit ended where this one starts)
// must be where this copy left it in the table (tableState.mine); one that came to the copy
// since, where the table held it when it came (tableState.covered, read at the rebalance).
func (s *sink) expectFor(ts *tableState, cp component.Commit) schemas.Offsets {
	if cp.From == nil {
		return nil
	}
	out := schemas.Offsets{}
	for src, parts := range cp.Moved() {
		for p := range parts {
			held := ts.covered
			from, fromOK := cp.From.Get(src, p)
			if last, ok := s.lastNext.Get(src, p); ok && fromOK && last == from {
				held = ts.mine
			}
			if v, ok := held.Get(src, p); ok {
				out.Set(src, p, v)
			}
		}
	}
	return out
}

// recordRouted notes what ts holds after this copy committed cp to it; under sink.mu.
func recordRouted(ts *tableState, cp component.Commit, tc *tableCommit) {
	mine, covered := ts.mine.Clone(), ts.covered.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			if v, ok := tc.expect.Get(src, p); ok {
				next = max(next, v)
			}
			mine.Set(src, p, next)
			covered.Set(src, p, next)
		}
	}
	// covered is replaced, never changed: writers read it without the lock.
	ts.mine, ts.covered = mine, covered
}

// coveredOf returns the offsets below which ts holds every row already (routing).
func (s *sink) coveredOf(ts *tableState) schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ts.covered
}
