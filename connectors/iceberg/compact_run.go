package iceberg

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"
)

// compactor runs a sink's compactions (the compaction key) in the background: after a commit,
// when a round is due and none is running, a goroutine plans and writes the rewrite of the
// tables that commit touched without holding any lock, so the lanes and the next epochs go
// on; only its catalog commit takes the sink's commitMu, so it is serialized with the sink's
// own commits (never concurrent with one) and holds an epoch's commit up by one catalog
// round trip at most.
type compactor struct {
	set          compactSettings
	every        time.Duration
	everyCommits int
	// hook, when set (tests, the sluicetest build), is called at the compaction's steps.
	hook func(step string) error

	mu      sync.Mutex
	running bool
	commits int       // commits since the last round started
	next    time.Time // when a round is due by time; zero until the first commit
	cancel  context.CancelFunc
	done    chan struct{}
	rounds  []CompactionStats // the rounds committed this run
	failed  int               // rounds abandoned or failed this run
}

func newCompactor(c *CompactionConfig) *compactor {
	every := time.Duration(c.Every)
	if every <= 0 && c.EveryCommits <= 0 {
		every = defaultCompactionEvery
	}
	return &compactor{set: c.settings(), every: every, everyCommits: c.EveryCommits, hook: compactPauseHook()}
}

// due reports whether a round should start after this commit, and counts the commit.
func (c *compactor) due(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits++
	if c.next.IsZero() && c.every > 0 {
		c.next = now.Add(c.every)
	}
	byTime := c.every > 0 && !now.Before(c.next)
	byCommits := c.everyCommits > 0 && c.commits >= c.everyCommits
	if c.running || !(byTime || byCommits) {
		return false
	}
	c.running, c.commits = true, 0
	if c.every > 0 {
		c.next = now.Add(c.every)
	}
	return true
}

// afterCommit starts a compaction round of tables in the background when one is due; Commit
// calls it, under commitMu, after its tables are committed.
func (s *sink) afterCommit(tables []*tableState) {
	c := s.compactor
	if c == nil || len(tables) == 0 || !c.due(time.Now()) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.mu.Lock()
	c.cancel, c.done = cancel, done
	c.mu.Unlock()
	go func() {
		defer close(done)
		for _, ts := range tables {
			s.compactTable(ctx, c, ts)
		}
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
	}()
}

// stopCompaction cancels a running round and waits for it; Open and Close call it before they
// take commitMu, which the round's commit needs.
func (s *sink) stopCompaction() {
	c := s.compactor
	if c == nil {
		return
	}
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// compactTable runs one compaction of ts: plan and write on the table as of the last commit,
// then commit under commitMu on the table as it is then. A failure is logged and the round
// given up (its files removed): the epoch's data is committed, and the next round plans anew.
func (s *sink) compactTable(ctx context.Context, c *compactor, ts *tableState) {
	start := time.Now()
	cat, tbl, err := s.current(ts)
	if err != nil {
		return
	}
	rw, err := planRewrite(ctx, tbl, cat, c.set)
	if err == nil && rw != nil && c.hook != nil {
		if err = c.hook(stepCompactWritten); err != nil {
			err = errors.Join(errHook, err)
		}
	}
	var next = tbl
	if err == nil && rw != nil {
		next, err = s.commitCompaction(ctx, c, ts, tbl, rw)
	}
	if rw == nil && err == nil {
		return // nothing to compact
	}
	if err != nil {
		c.mu.Lock()
		c.failed++
		c.mu.Unlock()
		if rw != nil && !errors.Is(err, errAbandon) && !errors.Is(err, errHook) {
			_ = rw.discard(context.Background(), tbl) // never committed: planning or writing failed
		}
		slog.Warn("compaction given up; the next round tries again", "sink", s.what, "table", ts.name, "error", err)
		return
	}
	c.mu.Lock()
	c.rounds = append(c.rounds, rw.stats)
	c.mu.Unlock()
	slog.Info("compacted", "sink", s.what, "table", ts.name, "what", rw.stats.String(),
		"snapshot", next.CurrentSnapshot().SnapshotID, "took", time.Since(start).Round(time.Millisecond))
}

// The step after a compaction wrote its files, before it waits for the sink's commits.
const stepCompactWritten = "compact-written"

// commitCompaction commits rw under commitMu, on the sink's current table.
func (s *sink) commitCompaction(ctx context.Context, c *compactor, ts *tableState, planned *table.Table, rw *rewrite) (*table.Table, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	_, cur, err := s.current(ts)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil { // closed or reopened meanwhile: the files were never committed
		_ = rw.discard(context.Background(), planned)
		return nil, errors.Join(errAbandon, err)
	}
	next, err := commitRewrite(ctx, rw, cur, func(ctx context.Context) (*table.Table, error) { return s.refresh(ctx, ts) }, c.hook)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ts.tbl = next
	s.mu.Unlock()
	return next, nil
}

// CompactPauseEnv names the environment variable of a test hook for crash tests, read only by
// a binary built with the build tag sluicetest: with SLUICE_TEST_ICEBERG_COMPACT_PAUSE=500ms
// every compaction pauses that long after writing its files (before it waits for the sink's
// commits), before its catalog commit and after it, printing "iceberg-compact-pause STEP" and
// "iceberg-compact-resume STEP" on stderr, so that a SIGKILL lands there.
const CompactPauseEnv = "SLUICE_TEST_ICEBERG_COMPACT_PAUSE"
