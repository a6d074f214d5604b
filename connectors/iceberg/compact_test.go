package iceberg

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// waitCompaction waits for the sink's running compaction round, if any, to end.
func waitCompaction(s *sink) {
	s.compactor.mu.Lock()
	done := s.compactor.done
	s.compactor.mu.Unlock()
	if done != nil {
		<-done
	}
}

// dataFiles counts the data and delete files of the table's current snapshot.
func (w warehouse) fileCounts(tableName string) (data, deletes int) {
	w.t.Helper()
	t, err := describeTable(context.Background(), w.load(tableName))
	if err != nil {
		w.t.Fatal(err)
	}
	return len(t.files), int(t.deletes)
}

// appendEpochs opens an append sink of pipeline "p" on db.events with compaction (YAML of its
// value) and commits epochs of rows rows each on 2 lanes, calling after after each commit; the sink is closed when t ends.
func (w warehouse) appendEpochs(compaction string, epochs, rows int, after func(s *sink)) (*sink, harness) {
	w.t.Helper()
	h := harness{t: w.t, pipeline: "p", lanes: 2}
	s := w.build(connectortest.Schema, "db.events", "compaction: "+compaction)
	h.open(s, "")
	w.t.Cleanup(func() { _ = s.Close(context.Background()) })
	d := connectortest.Driver{T: w.t, Pipeline: "p", Lanes: 2, Source: testSource}
	for e := 1; e <= epochs; e++ {
		h.write(s, connectortest.Schema, 0, (e-1)*rows, e*rows, idRow)
		h.flush(s, uint64(e))
		d.Commit(s, uint64(e), e*rows)
		after(s)
	}
	return s, h
}

// TestCompactionWhileAppending: an append sink with compaction commits 12 small epochs on 2
// lanes; every 5 commits a round in the background rewrites the small files into one. The
// rows read back with iceberg-go's scan are the same, the compaction snapshot carries the
// pipeline's checkpoint (a reopened sink resumes from it), and later epochs commit on top of
// it under compare-and-set.
func TestCompactionWhileAppending(t *testing.T) {
	w := newWarehouse(t)
	// One round at a time (waitCompaction), so that the test knows what to expect.
	s, h := w.appendEpochs("{target_file_size_mb: 1, min_input_files: 3, every_commits: 5}", 10, 100, waitCompaction)
	if got := len(s.compactor.rounds); got != 2 {
		t.Fatalf("%d compaction rounds committed after 10 commits with every_commits 5, want 2 (failed: %d)", got, s.compactor.failed)
	}
	data, _ := w.fileCounts("db.events")
	if data > 3 {
		t.Errorf("%d data files after compaction, want at most 3 (the compacted one and the epochs since)", data)
	}
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 1000)) {
		t.Fatalf("after compaction the table holds %d rows, want ids 0..999 once each", len(got))
	}
	snap := w.load("db.events").CurrentSnapshot()
	if snap.Summary.Operation != table.OpReplace || !strings.Contains(snap.Summary.Properties[keyOffsets], `"0":1000`) {
		t.Fatalf("current snapshot is %s with offsets %s, want the compaction carrying offset 1000", snap.Summary.Operation, snap.Summary.Properties[keyOffsets])
	}
	// Two more epochs on top of the compaction, then a fresh sink resumes from the table.
	for e := 11; e <= 12; e++ {
		h.write(s, connectortest.Schema, 0, (e-1)*100, e*100, idRow)
		h.flush(s, uint64(e))
		if err := s.Commit(context.Background(), component.Commit{Checkpoint: connectortest.Driver{Pipeline: "p", Source: testSource}.Checkpoint(uint64(e), e*100).Checkpoint,
			From: schemas.Offsets{testSource: {0: int64(e-1) * 100}}}); err != nil {
			t.Fatalf("commit epoch %d after the compaction: %v", e, err)
		}
	}
	s.Close(context.Background())
	s2 := w.build(connectortest.Schema, "db.events")
	cp := h.open(s2, "")
	defer s2.Close(context.Background())
	if next, _ := cp.Next.Get(testSource, 0); cp.Epoch != 12 || next != 1200 {
		t.Fatalf("reopened at epoch %d offset %d, want 12 and 1200", cp.Epoch, next)
	}
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 1200)) {
		t.Fatalf("the table holds %d rows, want ids 0..1199 once each", len(got))
	}
}

// TestCompactionUpsert: an upsert table compacted while its sink goes on committing equality
// deletes. A rewrite planned before an epoch that updates and deletes keys of the rewritten
// files and committed after it must not bring the old rows back: the new files keep the data
// sequence number of the snapshot they were read from, so the later deletes still apply. The
// delete files the rewrite makes obsolete are removed.
func TestCompactionUpsert(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"unpartitioned", nil},
		{"bucket(id)", []string{`partition_fields: ["bucket(id, 2)"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWarehouse(t)
			s := w.openUpsert("cdc", append([]string{"compaction: {min_input_files: 2, every: 1h}"}, tc.extra...)...)
			c := &cdcWriter{t: t}
			state := map[int64]string{}
			for i, ep := range epochs {
				c.write(s, 0, ep[0]...)
				c.write(s, 1, ep[1]...)
				apply(state, append(slices.Clone(ep[0]), ep[1]...)...)
				if err := c.commit(s, uint64(i+1)); err != nil {
					t.Fatal(err)
				}
			}
			_, deletesBefore := w.fileCounts("db.cdc")
			cat, tbl, err := s.current(s.tables["db.cdc"])
			if err != nil {
				t.Fatal(err)
			}
			rw, err := planRewrite(context.Background(), tbl, cat, s.compactor.set)
			if err != nil || rw == nil {
				t.Fatalf("planning: %v, %v", rw, err)
			}
			// An epoch committed between the rewrite's read and its commit; key 6 twice, so
			// that (unpartitioned) it deletes its own first row by position, which does not
			// abandon the rewrite.
			late := [2][]ev{{{0, "late0", "c"}, {2, "x", "d"}, {6, "late6", "u"}, {6, "late6.2", "u"}}, {{1, "x", "d"}, {11, "late11", "u"}}}
			c.write(s, 0, late[0]...)
			c.write(s, 1, late[1]...)
			apply(state, append(slices.Clone(late[0]), late[1]...)...)
			if err := c.commit(s, uint64(len(epochs)+1)); err != nil {
				t.Fatal(err)
			}
			_, deletesLate := w.fileCounts("db.cdc")
			if _, err := s.commitCompaction(context.Background(), s.compactor, s.tables["db.cdc"], tbl, rw); err != nil {
				t.Fatalf("committing the compaction after another epoch: %v", err)
			}
			sameState(t, w.keyed("db.cdc"), state)
			if _, deletesAfter := w.fileCounts("db.cdc"); rw.stats.DeleteFilesRemoved == 0 || deletesAfter >= deletesLate {
				t.Errorf("%d delete files before, %d after the late epoch, %d after the compaction, %d removed: the obsolete ones stayed", deletesBefore, deletesLate, deletesAfter, rw.stats.DeleteFilesRemoved)
			}
			// The sink goes on on top of the compaction.
			more := [2][]ev{{{20, "m20", "c"}, {6, "x", "d"}}, {{21, "m21", "c"}}}
			c.write(s, 0, more[0]...)
			c.write(s, 1, more[1]...)
			apply(state, append(slices.Clone(more[0]), more[1]...)...)
			if err := c.commit(s, uint64(len(epochs)+2)); err != nil {
				t.Fatal(err)
			}
			sameState(t, w.keyed("db.cdc"), state)
		})
	}
}

// TestCompactionAbandoned: a rewrite whose files another writer's compaction replaced first
// is abandoned: nothing of it is committed and its new files are removed from the warehouse.
func TestCompactionAbandoned(t *testing.T) {
	w := newWarehouse(t)
	s, _ := w.appendEpochs("{target_file_size_mb: 1, min_input_files: 2, every: 1h}", 3, 50, func(*sink) {})
	ts := s.tables["db.events"]
	cat, tbl, _ := s.current(ts)
	rw, err := planRewrite(context.Background(), tbl, cat, s.compactor.set)
	if err != nil || rw == nil {
		t.Fatalf("planning: %v, %v", rw, err)
	}
	w.compact("db.events") // another writer's compaction of the same files
	_, err = s.commitCompaction(context.Background(), s.compactor, ts, tbl, rw)
	if !errors.Is(err, errAbandon) {
		t.Fatalf("committing over another compaction: %v, want it abandoned", err)
	}
	for _, gr := range rw.results {
		for _, df := range gr.NewDataFiles {
			if _, err := os.Stat(strings.TrimPrefix(df.FilePath(), "file://")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("abandoned file %s is still there (%v)", df.FilePath(), err)
			}
		}
	}
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 150)) {
		t.Fatalf("the table holds %d rows, want ids 0..149 once each", len(got))
	}
}

// The compaction key's errors, at their positions.
func TestCompactionConfigErrors(t *testing.T) {
	w := newWarehouse(t)
	for _, tc := range []struct{ extra, want string }{
		{"compaction: {min_input_files: 1}", "pipeline.yaml:8:33: compaction.min_input_files must be 2 or more"},
		{"compaction: {target_file_size_mb: -1}", "pipeline.yaml:8:37: compaction.target_file_size_mb must be positive"},
		{"compaction: {every_commits: -2}", "pipeline.yaml:8:31: compaction.every_commits must be positive"},
	} {
		_, err := buildSink(t, w.config("db.t", tc.extra), connectortest.Schema)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.extra, err, tc.want)
		}
	}
}

// TestCompactAndExpireOnce: `sluice iceberg compact` and `expire` (Catalog.Compact, Expire)
// on a table a pipeline committed to: the compaction carries the checkpoint, so an expiry of
// every older snapshot leaves one snapshot and the pipeline still resumes from its offsets;
// the stats say what the table holds and what the compaction did.
func TestCompactAndExpireOnce(t *testing.T) {
	w := newWarehouse(t)
	s, h := w.appendEpochs("{every: 1h}", 6, 40, func(*sink) {})
	s.Close(context.Background())
	cat, err := NewCatalog("", w.props())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := cat.Compact(ctx, "db.events", 1, 3)
	if err != nil || st.DataFilesBefore < 6 || st.DataFilesAfter != 1 {
		t.Fatalf("compact: %+v, %v; want the 2 lanes' files of 6 epochs rewritten into one", st, err)
	}
	ex, err := cat.Expire(ctx, "db.events", time.Nanosecond)
	if err != nil || ex.Before != 7 || ex.After != 1 {
		t.Fatalf("expire: %+v, %v; want 7 snapshots before and only the compaction after", ex, err)
	}
	stats, err := cat.Stats(ctx, "db.events")
	if err != nil || stats.Rows != 240 || stats.DataFiles != 1 || stats.LastCompaction == nil || stats.LastCompaction.DataFilesAfter != 1 {
		t.Fatalf("stats: %+v, %v", stats, err)
	}
	if got := sorted(w.ids("db.events")); !slices.Equal(got, seq(0, 240)) {
		t.Fatalf("the table holds %d rows, want ids 0..239 once each", len(got))
	}
	s2 := w.build(connectortest.Schema, "db.events")
	cp := h.open(s2, "")
	defer s2.Close(context.Background())
	if next, _ := cp.Next.Get(testSource, 0); cp == nil || cp.Epoch != 6 || next != 240 {
		t.Fatalf("after the expiry the pipeline resumes at %+v, want epoch 6 offset 240", cp)
	}
}
