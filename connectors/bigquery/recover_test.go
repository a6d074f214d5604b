package bigquery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery/storage/managedwriter"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

var errCrash = errors.New("crash")

// crashAt makes Commit stop at step, as a crash there would, until the test ends.
func crashAt(t *testing.T, step string) {
	stepHook = func(s string) error {
		if s == step {
			return errCrash
		}
		return nil
	}
	t.Cleanup(func() { stepHook = nil })
}

// interrupted writes rows 0..9 as epoch 1 and commits them, then rows 10..19 as epoch 2,
// whose commit stops at step. It returns the fake and a function that opens the sink again,
// as a restarted process would.
func interrupted(t *testing.T, step string, extra ...string) (*fakeBQ, func(...component.CommitVerdict) (*component.Checkpoint, error)) {
	ctx := context.Background()
	f := newFakeBQ(t)
	info := component.SinkInfo{Pipeline: "p", Lanes: 2}
	d := connectortest.Driver{T: t, Pipeline: info.Pipeline, Lanes: 2, Source: "test:in"}
	s := f.build(connectortest.Schema, "t", extra...)
	t.Cleanup(func() { _ = s.Close(ctx) }) // the crashed process's clients, once the test is done
	if _, err := s.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) {
		for i := from; i < to; i++ {
			b := &schemas.Batch{Schema: connectortest.Schema, Rows: []schemas.Row{{int64(i), "row"}},
				Pos: []schemas.Position{{Source: "test:in", Offset: int64(i)}}}
			if err := s.Writer(i%2).Write(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 10)
	d.Flush(s, 1)
	d.Commit(s, 1, 10)
	write(10, 20)
	d.Flush(s, 2)
	crashAt(t, step)
	if err := s.Commit(ctx, d.Checkpoint(2, 20)); !errors.Is(err, errCrash) {
		t.Fatalf("commit stopped at %s: %v", step, err)
	}
	stepHook = nil
	return f, func(verdict ...component.CommitVerdict) (*component.Checkpoint, error) {
		s := f.build(connectortest.Schema, "t", extra...)
		t.Cleanup(func() { _ = s.Close(ctx) })
		info := info
		for _, v := range verdict {
			info.UnknownCommit = v
		}
		return s.Open(ctx, info)
	}
}

// wantState fails unless the checkpoint is at epoch (and offset 10*epoch) and the table holds
// ids 0..rows-1, once each.
func wantState(t *testing.T, f *fakeBQ, cp *component.Checkpoint, epoch uint64, rows int) {
	t.Helper()
	if cp == nil || cp.Epoch != epoch || cp.Next["test:in"][0] != int64(10*epoch) {
		t.Errorf("checkpoint %+v, want epoch %d at offset %d", cp, epoch, 10*epoch)
	}
	ids := f.ids("t")
	if len(ids) != rows {
		t.Fatalf("table holds ids %v, want 0..%d", ids, rows-1)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("table holds ids %v, want 0..%d once each", ids, rows-1)
		}
	}
}

// A crash after the streams were finalized and before the intent: nothing of epoch 2 is
// committed, and the restart resumes from epoch 1.
func TestRecoverBeforeIntent(t *testing.T) {
	f, reopen := interrupted(t, "finalized")
	cp, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 1, 10)
}

// A crash between the intent and BatchCommitWriteStreams: the restart commits the finalized
// streams and stands on epoch 2.
func TestRecoverCommitsFinalizedStreams(t *testing.T) {
	f, reopen := interrupted(t, "intent-saved")
	if got := f.ids("t"); len(got) != 10 {
		t.Fatalf("before the restart the table holds %d rows, want epoch 1's 10", len(got))
	}
	cp, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 2, 20)
}

// A crash after BatchCommitWriteStreams and before the checkpoint: the streams have a commit
// time, and the restart stands on epoch 2 without committing anything again.
func TestRecoverFindsCommit(t *testing.T) {
	f, reopen := interrupted(t, "committed")
	commits := f.srv.Calls().BatchCommitWriteStreams
	cp, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 2, 20)
	if n := f.srv.Calls().BatchCommitWriteStreams; n != commits {
		t.Errorf("the restart committed again (%d commits, %d before)", n, commits)
	}
}

// forgetIntentStreams drops the metadata of the intent's streams on the server, as BigQuery's
// garbage collection does, and dates the intent age ago.
func forgetIntentStreams(t *testing.T, f *fakeBQ, age time.Duration) {
	t.Helper()
	file := stateFileFor(f.dir+"/state", "p", "WriteToBigQuery", "")
	st, err := file.read()
	if err != nil || st == nil || st.Intent == nil {
		t.Fatalf("no intent saved: %+v %v", st, err)
	}
	for _, name := range st.Intent.Streams {
		if err := f.srv.ForgetStream(name); err != nil {
			t.Fatal(err)
		}
	}
	st.Intent.At = time.Now().Add(-age)
	if err := file.write(st); err != nil {
		t.Fatal(err)
	}
}

// A young intent whose streams BigQuery does not know never committed: epoch 2 is read again.
func TestRecoverYoungLostStreams(t *testing.T) {
	f, reopen := interrupted(t, "intent-saved")
	forgetIntentStreams(t, f, time.Minute)
	cp, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 1, 10)
}

// An old intent whose streams BigQuery does not know is not guessed at: the error names the
// stream and the two ways out, and each way out does what it says.
func TestRecoverOldLostStreams(t *testing.T) {
	f, reopen := interrupted(t, "intent-saved")
	forgetIntentStreams(t, f, 3*time.Hour)
	_, err := reopen()
	if err == nil || !strings.Contains(err.Error(), "--bigquery-intent=assume-committed") ||
		!strings.Contains(err.Error(), "--bigquery-intent=assume-lost") || !strings.Contains(err.Error(), "/streams/") {
		t.Fatalf("want an error naming the stream and both ways out, got %v", err)
	}
	cp, err := reopen(component.AssumeLost)
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 1, 10)

	f, reopen = interrupted(t, "intent-saved")
	forgetIntentStreams(t, f, 3*time.Hour)
	cp, err = reopen(component.AssumeCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil || cp.Epoch != 2 {
		t.Fatalf("assume-committed: checkpoint %+v, want epoch 2", cp)
	}
}

// With source_position_columns, an old intent whose streams BigQuery no longer knows is decided
// by counting the rows of its offset ranges in the table: none there, the epoch is read again;
// there, it committed. The columns hold each row's source position.
func TestRecoverOldLostStreamsByPositions(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		step  string
		epoch uint64
	}{{"intent-saved", 1}, {"committed", 2}} {
		f, _ := interrupted(t, c.step, "source_position_columns: true")
		forgetIntentStreams(t, f, 3*time.Hour)
		s := f.build(connectortest.Schema, "t", "source_position_columns: true")
		var counted []offsetRange
		s.count = func(_ context.Context, ranges []offsetRange) (int64, error) {
			counted = ranges
			return f.countByPosition("t", ranges), nil
		}
		cp, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 2})
		if err != nil {
			t.Fatalf("crash at %s: %v", c.step, err)
		}
		wantState(t, f, cp, c.epoch, int(10*c.epoch))
		if want := (offsetRange{source: "test:in", partition: 0, from: 10, next: 20}); len(counted) != 1 || counted[0] != want {
			t.Errorf("crash at %s: counted %+v, want epoch 2's range %+v", c.step, counted, want)
		}
		_ = s.Close(ctx)
	}
}

// countByPosition counts the committed rows of ds.table whose source position columns fall in
// ranges, as the sink's count query does in BigQuery.
func (f *fakeBQ) countByPosition(table string, ranges []offsetRange) int64 {
	var n int64
	for _, r := range f.rows(table) {
		src, _ := r[colSource].(string)
		part, _ := r[colPartition].(int64)
		off, ok := r[colOffset].(int64)
		if !ok {
			f.t.Fatalf("row %v has no source position", r)
		}
		for _, rg := range ranges {
			if src == rg.source && part == int64(rg.partition) && off >= rg.from && off < rg.next {
				n++
			}
		}
	}
	return n
}

// An intent whose streams BigQuery knows but refuses to commit (INVALID_STREAM_STATE: "not
// finalized or garbaged") is as good as lost: a young one is read again rather than retried
// at every start.
func TestRecoverUncommittableStreams(t *testing.T) {
	f, reopen := interrupted(t, "intent-saved")
	file := stateFileFor(f.dir+"/state", "p", "WriteToBigQuery", "")
	st, err := file.read()
	if err != nil || st == nil || st.Intent == nil {
		t.Fatalf("no intent saved: %+v %v", st, err)
	}
	ctx := context.Background()
	mw, err := managedwriter.NewClient(ctx, testProject, f.srv.WriteClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	ms, err := mw.NewManagedStream(ctx, managedwriter.WithType(managedwriter.PendingStream),
		managedwriter.WithDestinationTable(tableRef{testProject, "ds", "t"}.parent()))
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	st.Intent.Streams = []string{ms.StreamName()} // known, never finalized
	if err := file.write(st); err != nil {
		t.Fatal(err)
	}
	cp, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, f, cp, 1, 10)
}

// A sink whose state was written for another table refuses to start, rather than settle that
// table's commit against this one.
func TestStateOfAnotherTable(t *testing.T) {
	ctx := context.Background()
	f, _ := interrupted(t, "intent-saved")
	s := f.build(connectortest.Schema, "other")
	defer s.Close(ctx)
	_, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 2})
	if err == nil || !strings.Contains(err.Error(), "was written for table sluice-test.ds.t, and it now writes sluice-test.ds.other") {
		t.Fatalf("want a refusal naming both tables, got %v", err)
	}
}

// A copy given partitions settles another copy's commit that a crash interrupted when that
// commit would move them further: finalized streams are committed, and the checkpoint stands
// past them; a commit that never reached its intent counts for nothing.
func TestMergedSettlesAnotherCopysCommit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		step  string
		epoch int
	}{{"finalized", 1}, {"intent-saved", 2}, {"committed", 2}} {
		f, _ := interrupted(t, c.step)
		crashed, err := stateFileFor(f.dir+"/state", "p", "WriteToBigQuery", "").read()
		if err != nil {
			t.Fatal(err)
		}
		s := f.build(connectortest.Schema, "t")
		if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 2, Instance: "b"}); err != nil {
			t.Fatal(err)
		}
		cp, err := s.merged(ctx, state{Pipeline: "p"}, map[string]*state{"p/WriteToBigQuery": crashed})
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.Next["test:in"][0]; got != int64(10*c.epoch) {
			t.Errorf("crash at %s: the other copy's partition starts at %d, want %d", c.step, got, 10*c.epoch)
		}
		if ids := f.ids("t"); len(ids) != 10*c.epoch {
			t.Errorf("crash at %s: the table holds %d rows, want %d", c.step, len(ids), 10*c.epoch)
		}
		_ = s.Close(ctx)
	}
}

// Several copies of a pipeline cannot share a checkpoint_dir: a sink that keeps its state there
// refuses to be written by copies in a consumer group, and says what to do.
func TestSharedRefusesCheckpointDir(t *testing.T) {
	ctx := context.Background()
	f := newFakeBQ(t)
	s := f.build(connectortest.Schema, "t")
	defer s.Close(ctx)
	_, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 1, Instance: "a", Shared: true})
	if err == nil || !strings.Contains(err.Error(), "remove checkpoint_dir") {
		t.Fatalf("want a refusal saying to remove checkpoint_dir, got %v", err)
	}
}

// The state of a copy that wrote another table (before the pipeline was pointed at this one)
// does not move this table's offsets, and its interrupted commit is not settled here.
func TestMergedIgnoresAnotherTablesCopy(t *testing.T) {
	ctx := context.Background()
	f, _ := interrupted(t, "intent-saved")
	crashed, err := stateFileFor(f.dir+"/state", "p", "WriteToBigQuery", "").read()
	if err != nil {
		t.Fatal(err)
	}
	s := f.build(connectortest.Schema, "other")
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 2, Instance: "b"}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	commits := f.srv.Calls().BatchCommitWriteStreams
	cp, err := s.merged(ctx, state{Pipeline: "p"}, map[string]*state{"p/WriteToBigQuery": crashed})
	if err != nil {
		t.Fatal(err)
	}
	if cp != nil {
		t.Errorf("checkpoint %+v from a copy of table t, want none for table other", cp)
	}
	if n := f.srv.Calls().BatchCommitWriteStreams; n != commits {
		t.Errorf("committed table t's streams while opening table other")
	}
}

// The intent of a commit is saved with the group's offsets where the commit's rows begin, not
// where they end: were the commit found lost, a partition its checkpoint does not hold would
// resume from the group's offset and skip the commit's rows.
func TestIntentFences(t *testing.T) {
	cp := component.Commit{
		Checkpoint: component.Checkpoint{Next: schemas.Offsets{"kafka:t": {0: 50, 1: 70, 2: 90}}},
		From:       schemas.Offsets{"kafka:t": {0: 40}},
		Fences:     []component.GroupFence{{Group: "g", MemberID: "m", Generation: 3, Offsets: schemas.Offsets{"kafka:t": {0: 50, 1: 70, 2: 90}}}},
	}
	written := schemas.Offsets{"kafka:t": {0: 41, 1: 60}}
	got := intentFences(cp, written)
	want := schemas.Offsets{"kafka:t": {0: 40, 1: 60, 2: 90}} // held, first written, nothing written
	if len(got) != 1 || got[0].Group != "g" || got[0].MemberID != "m" || got[0].Generation != 3 || !got[0].Offsets.Equal(want) {
		t.Errorf("intent fences %+v, want offsets %v", got, want)
	}
	if !cp.Fences[0].Offsets.Equal(cp.Next) {
		t.Errorf("the checkpoint's own fences changed: %v", cp.Fences[0].Offsets)
	}
}

// A copy that settled another copy's interrupted commit records its verdict, and every copy
// keeps it: later, a count over the commit's offsets would find the rows the first copy wrote
// again after judging the commit lost, and take it as committed.
func TestMergedKeepsAnotherCopysVerdict(t *testing.T) {
	ctx := context.Background()
	f, _ := interrupted(t, "intent-saved", "source_position_columns: true")
	forgetIntentStreams(t, f, 3*time.Hour)
	crashed, err := stateFileFor(f.dir+"/state", "p", "WriteToBigQuery", "").read()
	if err != nil {
		t.Fatal(err)
	}
	s := f.build(connectortest.Schema, "t", "source_position_columns: true")
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 2, Instance: "c"}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	counted := 0
	s.count = func(context.Context, []offsetRange) (int64, error) { counted++; return 5, nil }
	// Copy b judged the commit lost while it was young, read epoch 2's offsets again and
	// committed 10..14 of them.
	b := &state{Pipeline: "p", Table: "sluice-test.ds.t", Epoch: 3, Next: schemas.Offsets{"test:in": {0: 15}},
		Settled: map[string]verdict{"p/WriteToBigQuery": {Epoch: 2, Committed: false}}}
	cp, err := s.merged(ctx, state{Pipeline: "p"}, map[string]*state{"p/WriteToBigQuery": crashed, "p/WriteToBigQuery@b": b})
	if err != nil {
		t.Fatal(err)
	}
	if got := cp.Next["test:in"][0]; got != 15 || counted != 0 {
		t.Errorf("with b's verdict: partition at %d after %d counts, want 15 and no count", got, counted)
	}
	if v := s.st.Settled["p/WriteToBigQuery"]; v.Epoch != 2 || v.Committed {
		t.Errorf("copy c keeps the verdict %+v, want epoch 2 lost", v)
	}
	delete(b.Settled, "p/WriteToBigQuery")
	s.st.Settled = nil
	if cp, err = s.merged(ctx, state{Pipeline: "p"}, map[string]*state{"p/WriteToBigQuery": crashed, "p/WriteToBigQuery@b": b}); err != nil {
		t.Fatal(err)
	}
	if got := cp.Next["test:in"][0]; got != 20 || counted != 1 {
		t.Errorf("without it: partition at %d after %d counts, want the count to decide (20)", got, counted)
	}
}
