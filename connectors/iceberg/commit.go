package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Commit retries: a conflicting commit of another writer, or a failure whose outcome is
// unknown, is retried this many times in all, waiting between commitBackoffMin and
// commitBackoffMax (doubling, with jitter).
const (
	commitAttempts   = 10
	commitBackoffMin = 50 * time.Millisecond
	commitBackoffMax = 2 * time.Second
)

// errLostReply, returned by a test hook at stepSent, stands for a commit whose reply was lost:
// Commit must find out from the table whether it happened. Any other hook error stops Commit
// as a crash would.
var errLostReply = errors.New("the catalog's reply was lost")

// Commit adds every file sealed for the epochs up to cp.Epoch to the table in one snapshot
// whose summary records cp. With routing, each table with files gets its own snapshot, in
// the order of their names, and the last one marks the epoch complete; an epoch without
// files records its offsets in the table that carries the newest complete epoch.
func (s *sink) Commit(ctx context.Context, cp component.Commit) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	pipeline, marked, open := s.pipeline, s.marked, s.cat != nil
	var todo []*tableState
	for _, name := range slices.Sorted(maps.Keys(s.tables)) {
		ts := s.tables[name]
		if s.plan.route == nil || hasSealed(ts, cp.Epoch) {
			todo = append(todo, ts)
		}
	}
	if len(todo) == 0 && marked != "" {
		todo = append(todo, s.tables[marked])
	}
	s.mu.Unlock()
	if !open {
		return fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	if cp.Pipeline != pipeline {
		return fmt.Errorf("%s: commit for pipeline %q, opened for %q", s.what, cp.Pipeline, pipeline)
	}
	if s.plan.route != nil {
		if err := s.commitRouted(ctx, todo, cp); err != nil {
			return err
		}
	} else {
		for _, ts := range todo {
			if err := s.commitTable(ctx, ts, cp, nil); err != nil {
				return err
			}
		}
	}
	for _, ts := range todo {
		s.maintain(ctx, ts, pipeline)
		s.dropStateFiles(ctx, ts, pipeline)
	}
	s.afterCommit(todo)
	return nil
}

// hasSealed reports whether ts has files sealed for epochs up to epoch; under sink.mu.
func hasSealed(ts *tableState, epoch uint64) bool {
	for e, files := range ts.sealed {
		if e <= epoch && len(files) > 0 {
			return true
		}
	}
	return false
}

// commitTable commits the files of ts for the epochs up to cp.Epoch. The snapshot's base is
// pinned: when the table moved meanwhile, the commit is rebuilt on the new state, its
// offsets checked again (compare-and-set) and sent again. A commit already in the table's
// history is not sent again.
func (s *sink) commitTable(ctx context.Context, ts *tableState, cp component.Commit, tc *tableCommit) error {
	_, tbl, err := s.current(ts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	pipeline, instance, last := s.pipeline, s.instance, ts.last
	s.mu.Unlock()
	if cp.Epoch <= last {
		done, err := committedEpoch(tbl.Metadata(), cp, instance)
		if err != nil {
			return fmt.Errorf("%s: table %s: %w", s.what, ts.name, err)
		}
		if done {
			s.committed(ts, cp.Epoch, nil, cp, tc)
			return nil
		}
	}
	files := s.pending(ts, cp.Epoch)
	var deletes []iceberg.DataFile
	if s.plan.upsert != nil {
		if files, deletes, err = s.writeChanges(ctx, ts, tbl, files, s.pendingChanges(ts, cp.Epoch)); err != nil {
			return fmt.Errorf("%s: epoch %d of table %s: %w", s.what, cp.Epoch, ts.name, err)
		}
	}
	commitID := uuid.NewString()
	var state *stateRef
	if len(cp.State) > stateInline() {
		if state, err = s.writeStateFile(ctx, ts, tbl, cp.Epoch, commitID, cp.State); err != nil {
			return err
		}
	}
	var lastErr error
	for attempt := range commitAttempts {
		if attempt > 0 {
			s.retries.Add(1)
			if err := backoff(ctx, attempt); err != nil {
				return fmt.Errorf("%s: committing epoch %d to table %s: %w (last failure: %w)", s.what, cp.Epoch, ts.name, err, lastErr)
			}
			fresh, err := s.refresh(ctx, ts)
			if err != nil {
				lastErr = err
				continue
			}
			tbl = fresh
			// The previous attempt may have been committed without our hearing of it.
			if found, err := findCommit(tbl.Metadata(), pipeline, commitID); err != nil {
				return fmt.Errorf("%s: table %s: %w", s.what, ts.name, err)
			} else if found {
				s.committed(ts, cp.Epoch, tbl, cp, tc)
				return nil
			}
		}
		next, err := s.commitOnce(ctx, ts.name, tbl, cp, files, deletes, instance, commitID, tc, state)
		if err == nil {
			s.committed(ts, cp.Epoch, next, cp, tc)
			return nil
		}
		var conflict *OffsetConflictError
		if errors.As(err, &conflict) || errors.Is(err, errHook) || ctx.Err() != nil {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("%s: committing epoch %d to table %s failed %d times; the next run resumes from the last committed epoch: %w",
		s.what, cp.Epoch, ts.name, commitAttempts, lastErr)
}

// errHook marks errors of the test hook that stop Commit.
var errHook = errors.New("stopped by the test hook")

// commitOnce builds the epoch's snapshot on tbl and sends it, pinned to tbl's current snapshot:
// an append of files, or with equality deletes (upserts) a row delta of both. tc is, with
// routing, what the table must hold and the copy's own record; nil without. state is the
// file the epoch's window state was written to, nil to keep it inline.
func (s *sink) commitOnce(ctx context.Context, name string, tbl *table.Table, cp component.Commit, files, deletes []iceberg.DataFile, instance, commitID string, tc *tableCommit, state *stateRef) (*table.Table, error) {
	st, err := latest(tbl.Metadata(), cp.Pipeline)
	if err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, name, err)
	}
	var have schemas.Offsets
	if st != nil {
		have = st.offsets
	}
	expect, checked := cp.From, schemas.Offsets(nil)
	if tc != nil {
		expect, checked = tc.expect, tc.checked
	}
	merged, err := casMerge(name, have, cp, expect, checked)
	if err != nil {
		return nil, err
	}
	props, err := summaryProps(cp.Checkpoint, instance, commitID, merged, tc != nil && tc.complete, state)
	if err == nil && tc != nil {
		err = putOwn(props, tc.own)
	}
	if err != nil {
		return nil, err
	}
	txn := tbl.NewTransaction()
	if err := txn.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, name, err)
	}
	switch {
	case len(deletes) > 0:
		err = stageRowDelta(ctx, txn, files, deletes, props)
	case len(files) > 0:
		err = txn.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck())
	default: // no rows, but the offsets moved: an empty snapshot records them
		err = txn.AddFiles(ctx, nil, props, false)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: preparing the snapshot of epoch %d for table %s: %w", s.what, cp.Epoch, name, err)
	}
	if err := s.step(stepBefore); err != nil {
		return nil, fmt.Errorf("%w: %w", errHook, err)
	}
	next, err := txn.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: committing epoch %d to table %s: %w", s.what, cp.Epoch, name, diskError(err, s.catalogFile()))
	}
	if err := s.step(stepSent); err != nil {
		if errors.Is(err, errLostReply) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errHook, err)
	}
	return next, nil
}

// backoff waits before attempt (1, 2, ...), or returns the context's error.
func backoff(ctx context.Context, attempt int) error {
	d := min(commitBackoffMin<<(attempt-1), commitBackoffMax)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
