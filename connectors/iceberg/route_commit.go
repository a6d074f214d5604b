package iceberg

import (
	"context"
	"slices"

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

// maxReloads is how many Reloads a sink keeps for settle.
const maxReloads = 16

// reloaded is what a Reload (or Open) found: the checkpoint's offsets it returned, and what
// each routed table held then (the tables' offsets, by table name).
type reloaded struct {
	next   schemas.Offsets
	tables map[string]schemas.Offsets
}

// commitRouted commits an epoch to the routed tables that got rows (todo, in the order of
// their names; the last one marks the epoch complete).
//
// Several copies may write the same tables, so the offsets are compared per table (a table
// that got no rows for a while holds older offsets than the epoch starts from): a table
// records, per partition, how far it holds the partition's rows (the table's offsets), and a
// commit that moves a partition must find there what this copy knows of it
// (tableState.known): what the table held when the partition came to this copy, moved by the
// copy's own commits since (settle). A copy that lost the partition meanwhile (a zombie)
// finds the new owner's offsets in any table the new owner committed since, and fails; the
// new owner, finding a zombie's commit, fails too, and its next run drops what the zombie
// wrote.
func (s *sink) commitRouted(ctx context.Context, todo []*tableState, cp component.Commit) error {
	s.mu.Lock()
	s.settle(cp)
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

// settle sets, before the first commit after partitions came to this copy, what the copy
// knows each table holds of them; under sink.mu. A partition came to it when the commit
// starts it elsewhere than the copy's last commit left it (cp.From is then where the
// rebalance started it: the offset the Reload that gave it returned). What the tables held
// is taken from the earliest Reload kept (maxReloads) that returned that offset: a later one
// may have read a zombie's commit, which the writers did not drop, and an earlier one that
// returned the same offset can only hold the same or lower offsets (a false conflict, never
// a duplicate). The Reloads are kept across commits: the runner may commit an epoch it cut
// before a Reload after it, which does not yet start the partition there.
func (s *sink) settle(cp component.Commit) {
	for src, parts := range cp.From {
		for p, from := range parts {
			if last, ok := s.lastNext.Get(src, p); ok && last == from {
				continue // kept since the last commit
			}
			i := slices.IndexFunc(s.reloads, func(r reloaded) bool {
				n, ok := r.next.Get(src, p)
				return ok && n == from
			})
			if i < 0 {
				continue
			}
			for name, ts := range s.tables {
				held, ok := s.reloads[i].tables[name]
				if !ok {
					continue // not a table then: prepared since, from its history (adoptRouted)
				}
				known := ts.known.Clone()
				if v, ok := held.Get(src, p); ok {
					known.Set(src, p, v)
				} else {
					known.Delete(src, p)
				}
				ts.known = known
			}
		}
	}
}

// expectFor returns what the table of ts must hold of each partition cp moved; under sink.mu.
func expectFor(ts *tableState, cp component.Commit) schemas.Offsets {
	if cp.From == nil {
		return nil
	}
	out := schemas.Offsets{}
	for src, parts := range cp.Moved() {
		for p := range parts {
			if v, ok := ts.known.Get(src, p); ok {
				out.Set(src, p, v)
			}
		}
	}
	return out
}

// recordRouted notes what ts holds after this copy committed cp to it; under sink.mu.
func recordRouted(ts *tableState, cp component.Commit, tc *tableCommit) {
	known, covered := ts.known.Clone(), ts.covered.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			if v, ok := tc.expect.Get(src, p); ok {
				next = max(next, v)
			}
			known.Set(src, p, next)
			covered.Set(src, p, max(next, offsetOr(covered, src, p)))
		}
	}
	ts.known, ts.covered = known, covered // replaced, never changed: writers read covered unlocked
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

// foundRouted is what Open or a Reload found: the checkpoint cp it returns and the offsets of
// tables as just read.
func foundRouted(cp *component.Checkpoint, tables map[string]*tableState) reloaded {
	r := reloaded{next: schemas.Offsets{}, tables: map[string]schemas.Offsets{}}
	if cp != nil {
		r.next = cp.Next.Clone()
	}
	for name, ts := range tables {
		r.tables[name] = ts.covered
	}
	return r
}
