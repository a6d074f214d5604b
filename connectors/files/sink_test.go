package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// sinkKind is one of the sinks under test, with how a record becomes a row and a line.
type sinkKind struct {
	typ    string
	schema *schemas.Schema
	row    func(i int) schemas.Row
	line   func(i int) string
	ext    string
}

var sinkKinds = []sinkKind{
	{
		typ:    "WriteToJson",
		schema: schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}}, schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}}),
		row:    func(i int) schemas.Row { return schemas.Row{int64(i), fmt.Sprintf("n%d", i)} },
		line:   func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) },
		ext:    ".jsonl",
	},
	{
		typ:    "WriteToText",
		schema: textSchema,
		row:    func(i int) schemas.Row { return schemas.Row{fmt.Sprintf("record %d", i)} },
		line:   func(i int) string { return fmt.Sprintf("record %d", i) },
		ext:    ".txt",
	},
}

// testSource is the Position.Source of the records the harness writes: record i is at
// offset i, so a checkpoint's next offset is the number of records it covers.
const testSource = "file:in.txt"

// harness drives a sink as the runner does: lanes write and flush each epoch, then Commit
// gets the cumulative offsets; after a restart, records the restored checkpoint covers are
// dropped before Write.
type harness struct {
	t        *testing.T
	kind     sinkKind
	dir      string
	pipeline string
	lanes    int
}

func newHarness(t *testing.T, kind sinkKind) *harness {
	return &harness{t: t, kind: kind, dir: filepath.Join(t.TempDir(), "out"), pipeline: "p@1", lanes: 2}
}

func (h *harness) build() *sink {
	h.t.Helper()
	c, _ := mustBuild(h.t, fmt.Sprintf("type: %s\nconfig:\n  path: %q\n", h.kind.typ, h.dir), h.kind.schema)
	return c.(*sink)
}

// open builds and opens a sink and returns the checkpoint it restored.
func (h *harness) open() (*sink, *component.Checkpoint) {
	h.t.Helper()
	s := h.build()
	cp, err := s.Open(context.Background(), component.SinkInfo{Pipeline: h.pipeline, Lanes: h.lanes})
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	return s, cp
}

// write writes records [from, to) in the current epoch, record i on lane i % lanes, in
// batches of up to three, skipping those restored covers.
func (h *harness) write(s *sink, from, to int, restored *component.Checkpoint) {
	h.t.Helper()
	ctx := context.Background()
	for lane := range h.lanes {
		b := &schemas.Batch{Schema: h.kind.schema}
		for i := from; i < to; i++ {
			pos := schemas.Position{Source: testSource, Offset: int64(i)}
			if i%h.lanes != lane || (restored != nil && restored.Next.Covers(pos)) {
				continue
			}
			b.Rows = append(b.Rows, h.kind.row(i))
			b.Pos = append(b.Pos, pos)
			if len(b.Rows) == 3 {
				if err := s.Writer(lane).Write(ctx, b); err != nil {
					h.t.Fatalf("write: %v", err)
				}
				b = &schemas.Batch{Schema: h.kind.schema}
			}
		}
		if err := s.Writer(lane).Write(ctx, b); err != nil {
			h.t.Fatalf("write: %v", err)
		}
	}
}

func (h *harness) flush(s *sink, epoch uint64) {
	h.t.Helper()
	h.driver().Flush(s, epoch)
}

func (h *harness) checkpoint(epoch uint64, next int) component.Commit {
	return h.driver().Checkpoint(epoch, next)
}

func (h *harness) commit(s *sink, epoch uint64, next int) {
	h.t.Helper()
	h.driver().Commit(s, epoch, next)
}

func (h *harness) driver() connectortest.Driver {
	return connectortest.Driver{T: h.t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
}

// epoch writes records [from, to) as epoch and commits it.
func (h *harness) epoch(s *sink, epoch uint64, from, to int, restored *component.Checkpoint) {
	h.t.Helper()
	h.write(s, from, to, restored)
	h.flush(s, epoch)
	h.commit(s, epoch, to)
}

// committed returns the committed lines, sorted within each epoch (lanes interleave).
func (h *harness) committed() []string {
	h.t.Helper()
	got, err := ReadCommitted(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	out := strs(got)
	sort.Strings(out)
	return out
}

// wantRecords is the sorted lines of records [0, n).
func (h *harness) wantRecords(n int) []string {
	var out []string
	for i := range n {
		out = append(out, h.kind.line(i))
	}
	sort.Strings(out)
	return out
}

// checkExactly checks that the committed lines are records [0, n), each once, and that no
// unfinished epoch is left behind.
func (h *harness) checkExactly(n int) {
	h.t.Helper()
	if got, want := h.committed(), h.wantRecords(n); !equalStrings(got, want) {
		h.t.Errorf("committed %d lines %q,\nwant records 0..%d: %q", len(got), got, n-1, want)
	}
}

func (h *harness) entries(sub string) []string {
	h.t.Helper()
	es, err := os.ReadDir(filepath.Join(h.dir, sub))
	if err != nil {
		h.t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func forEachSink(t *testing.T, f func(t *testing.T, h *harness)) {
	for _, k := range sinkKinds {
		t.Run(k.typ, func(t *testing.T) { f(t, newHarness(t, k)) })
	}
}

func TestSinkLayout(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, cp := h.open()
		defer s.Close(context.Background())
		if cp != nil {
			t.Fatalf("a new directory restored %+v", cp)
		}
		h.epoch(s, 1, 0, 5, nil)
		// epoch 2: only lane 1 has rows; epoch 3: none (everything filtered), offsets move on
		h.write(s, 5, 6, nil) // record 5 goes to lane 1
		h.flush(s, 2)
		h.commit(s, 2, 6)
		h.flush(s, 3)
		h.commit(s, 3, 9)

		e1, e2, e3 := epochName(1), epochName(2), epochName(3)
		if e1 != "epoch-00000000000000000001" {
			t.Errorf("epoch directory name %s", e1)
		}
		if got, want := h.entries(""), []string{e1, e2, e3}; !equalStrings(got, want) {
			t.Errorf("output directory holds %q, want %q", got, want)
		}
		lane0, lane1 := "lane-0"+h.kind.ext, "lane-1"+h.kind.ext
		for sub, want := range map[string][]string{e1: {checkpointFile, lane0, lane1}, e2: {checkpointFile, lane1}, e3: {checkpointFile}} {
			if got := h.entries(sub); !equalStrings(got, want) {
				t.Errorf("%s holds %q, want %q", sub, got, want)
			}
		}
		data, err := os.ReadFile(filepath.Join(h.dir, e1, lane0))
		if err != nil {
			t.Fatal(err)
		}
		if want := h.kind.line(0) + "\n" + h.kind.line(2) + "\n" + h.kind.line(4) + "\n"; string(data) != want {
			t.Errorf("lane 0 of epoch 1 holds %q, want %q", data, want)
		}
		var onDisk map[string]any
		data, _ = os.ReadFile(filepath.Join(h.dir, e3, checkpointFile))
		if err := json.Unmarshal(data, &onDisk); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"pipeline": "p@1", "epoch": 3.0, "next": map[string]any{testSource: map[string]any{"0": 9.0}}}
		if !reflect.DeepEqual(onDisk, want) {
			t.Errorf("checkpoint %s, want %v", data, want)
		}
		// ReadCommitted: epoch order, then lane order
		got, err := ReadCommitted(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		order := []int{0, 2, 4, 1, 3, 5}
		for i, rec := range order {
			if i >= len(got) || string(got[i]) != h.kind.line(rec) {
				t.Fatalf("ReadCommitted = %q, want records in order %v", got, order)
			}
		}
	})
}

func TestSinkRestoresCheckpoint(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		h.epoch(s, 1, 0, 4, nil)
		cp := h.checkpoint(2, 7)
		cp.State = []byte("window state")
		h.write(s, 4, 7, nil)
		h.flush(s, 2)
		if err := s.Commit(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
		s.Close(context.Background())

		s, restored := h.open()
		defer s.Close(context.Background())
		if restored == nil || !reflect.DeepEqual(*restored, cp.Checkpoint) {
			t.Errorf("restored %+v, want %+v", restored, cp)
		}
		h.epoch(s, 3, 7, 9, restored)
		h.checkExactly(9)
	})
}

// TestSinkEpochsOverlapCommit writes epoch 2 in the lanes before epoch 1 is committed, as
// the runner may: the commit of epoch 1 holds none of epoch 2's rows.
func TestSinkEpochsOverlapCommit(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		defer s.Close(context.Background())
		h.write(s, 0, 4, nil)
		h.flush(s, 1)
		h.write(s, 4, 8, nil) // epoch 2, while epoch 1 is not committed yet
		h.commit(s, 1, 4)
		h.checkExactly(4)
		h.flush(s, 2)
		h.commit(s, 2, 8)
		h.checkExactly(8)
	})
}

func TestSinkRecommitIsANoop(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		defer s.Close(context.Background())
		h.epoch(s, 1, 0, 4, nil)
		h.epoch(s, 2, 4, 6, nil)
		before := h.committed()
		h.commit(s, 2, 6)
		h.commit(s, 1, 4)
		h.commit(s, 1, 3) // covered by what epoch 1 committed
		if got := h.committed(); !equalStrings(got, before) {
			t.Errorf("a repeated commit changed the output: %q", got)
		}
		err := s.Commit(context.Background(), h.checkpoint(2, 10))
		if err == nil || !strings.Contains(err.Error(), "already committed with other offsets") {
			t.Errorf("a commit of epoch 2 beyond its offsets: got %v", err)
		}
	})
}

func TestSinkRemovesUnfinishedEpochs(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		h.epoch(s, 1, 0, 2, nil)
		s.Close(context.Background())
		writeFile(t, h.dir, tmpName(2)+"/lane-0"+h.kind.ext, "half an epoch\n")
		writeFile(t, h.dir, tmpName(2)+"/"+checkpointFile, "{")
		writeFile(t, h.dir, tmpName(7)+"/lane-3"+h.kind.ext, "x\n")
		writeFile(t, h.dir, "notes.md", "a user's file stays\n")

		s, cp := h.open()
		defer s.Close(context.Background())
		if cp == nil || cp.Epoch != 1 {
			t.Errorf("restored %+v, want epoch 1", cp)
		}
		if got, want := h.entries(""), []string{epochName(1), "notes.md"}; !equalStrings(got, want) {
			t.Errorf("after open the directory holds %q, want %q", got, want)
		}
		h.checkExactly(2)
	})
}

func TestSinkRefusesAnotherPipelinesOutput(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		h.epoch(s, 1, 0, 2, nil)
		s.Close(context.Background())

		h.pipeline = "other@1"
		_, err := h.build().Open(context.Background(), component.SinkInfo{Pipeline: "other@1", Lanes: 1})
		if err == nil || !strings.Contains(err.Error(), `pipeline "p@1"`) || !strings.Contains(err.Error(), "choose a new path") ||
			!strings.Contains(err.Error(), h.dir) {
			t.Errorf("got %v, want a refusal naming the directory, the other pipeline and the fix", err)
		}
	})
}

func TestSinkRefusesADamagedEpoch(t *testing.T) {
	h := newHarness(t, sinkKinds[0])
	writeFile(t, h.dir, epochName(3)+"/lane-0.jsonl", "{}\n")
	_, err := h.build().Open(context.Background(), component.SinkInfo{Pipeline: h.pipeline})
	if err == nil || !strings.Contains(err.Error(), "has no _checkpoint.json") {
		t.Errorf("got %v", err)
	}
}

func TestSinkOneWriterPerDirectory(t *testing.T) {
	h := newHarness(t, sinkKinds[0])
	s, _ := h.open()
	_, err := h.build().Open(context.Background(), component.SinkInfo{Pipeline: h.pipeline})
	if err == nil || !strings.Contains(err.Error(), "already written by another") {
		t.Errorf("got %v", err)
	}
	s.Close(context.Background())
	s, _ = h.open() // free again
	s.Close(context.Background())
}

// TestSinkCrashBetweenFlushAndCommit stops the sink after its lanes flushed epoch 2 and
// before the commit: after a restart nothing of epoch 2 is visible, the checkpoint is epoch
// 1's, and re-running from it gives every record once.
func TestSinkCrashBetweenFlushAndCommit(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		s, _ := h.open()
		h.epoch(s, 1, 0, 10, nil)
		h.write(s, 10, 20, nil)
		h.flush(s, 2)
		h.write(s, 20, 23, nil) // epoch 3 under way
		s.Close(context.Background())

		h.checkExactly(10)
		s, cp := h.open()
		defer s.Close(context.Background())
		if cp == nil || cp.Epoch != 1 || !cp.Next.Equal(schemas.Offsets{testSource: {0: 10}}) {
			t.Fatalf("restored %+v, want epoch 1 at offset 10", cp)
		}
		if got := h.entries(""); !equalStrings(got, []string{epochName(1)}) {
			t.Errorf("after open the directory holds %q", got)
		}
		// the runner resumes from the checkpoint; epoch 2 is run again, maybe cut elsewhere
		h.epoch(s, 2, 10, 25, cp)
		h.epoch(s, 3, 25, 30, cp)
		h.checkExactly(30)
	})
}

// TestSinkCrashDuringCommit stops Commit at each of its steps, as a crash would: after a
// restart the epoch is either fully committed or not at all, and the run completes with every
// record once.
func TestSinkCrashDuringCommit(t *testing.T) {
	for _, step := range []string{stepBegin, stepCheckpoint, stepRename, stepRenamed} {
		t.Run(step, func(t *testing.T) {
			forEachSink(t, func(t *testing.T, h *harness) {
				s, _ := h.open()
				h.epoch(s, 1, 0, 10, nil)
				h.write(s, 10, 20, nil)
				h.flush(s, 2)
				s.hook = func(at string) error {
					if at == step {
						return fmt.Errorf("crash at %s", at)
					}
					return nil
				}
				if err := s.Commit(context.Background(), h.checkpoint(2, 20)); err == nil {
					t.Fatal("the commit did not stop")
				}
				s.Close(context.Background())

				s, cp := h.open()
				defer s.Close(context.Background())
				wantEpoch, wantNext := uint64(1), 10
				if step == stepRenamed {
					wantEpoch, wantNext = 2, 20
				}
				if cp == nil || cp.Epoch != wantEpoch || !cp.Next.Equal(schemas.Offsets{testSource: {0: int64(wantNext)}}) {
					t.Fatalf("restored %+v, want epoch %d at offset %d", cp, wantEpoch, wantNext)
				}
				h.checkExactly(wantNext)
				h.epoch(s, cp.Epoch+1, wantNext, 30, cp)
				h.checkExactly(30)
			})
		})
	}
}

// TestSinkCommitRetryAfterFailure retries a Commit that failed after its rename, in the same
// process: the retry sees the epoch committed and does nothing.
func TestSinkCommitRetryAfterFailure(t *testing.T) {
	h := newHarness(t, sinkKinds[0])
	s, _ := h.open()
	defer s.Close(context.Background())
	h.write(s, 0, 5, nil)
	h.flush(s, 1)
	s.hook = func(at string) error {
		if at == stepRenamed {
			return fmt.Errorf("sync failed")
		}
		return nil
	}
	if err := s.Commit(context.Background(), h.checkpoint(1, 5)); err == nil {
		t.Fatal("the commit did not fail")
	}
	s.hook = nil
	h.commit(s, 1, 5)
	h.epoch(s, 2, 5, 8, nil)
	h.checkExactly(8)
}

// TestSinkOtherEpochNumbers checks lanes when the runner's epochs are not the ones after the
// restored checkpoint: the lane file goes to the epoch the lane flushes.
func TestSinkOtherEpochNumbers(t *testing.T) {
	h := newHarness(t, sinkKinds[0])
	s, _ := h.open()
	h.epoch(s, 5, 0, 4, nil)
	h.epoch(s, 9, 4, 8, nil)
	if got := h.entries(""); !equalStrings(got, []string{tmpName(1), tmpName(6), epochName(5), epochName(9)}) {
		t.Errorf("directory holds %q", got)
	}
	s.Close(context.Background())
	s, _ = h.open()
	defer s.Close(context.Background())
	if got := h.entries(""); !equalStrings(got, []string{epochName(5), epochName(9)}) {
		t.Errorf("after open the directory holds %q", got)
	}
	h.checkExactly(8)
}

func TestSinkRejectsOutOfOrderUse(t *testing.T) {
	h := newHarness(t, sinkKinds[0])
	s, _ := h.open()
	defer s.Close(context.Background())
	ctx := context.Background()
	h.write(s, 0, 4, nil)
	h.flush(s, 1)
	if err := s.Writer(0).Flush(ctx, 1); err != nil {
		t.Errorf("a repeated flush: %v", err)
	}
	h.flush(s, 2)
	if err := s.Writer(0).Flush(ctx, 1); err == nil {
		t.Error("a flush of epoch 1 after epoch 2 passed")
	}
	if err := s.Commit(ctx, h.checkpoint(2, 4)); err == nil || !strings.Contains(err.Error(), "epoch 1 has flushed rows") {
		t.Errorf("committing epoch 2 before epoch 1: %v", err)
	}
	h.commit(s, 1, 4)
	if err := s.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: "other", Epoch: 3}}); err == nil {
		t.Error("a commit for another pipeline passed")
	}
	h.checkExactly(4)
}

func TestWriteTextNullsAndNonStrings(t *testing.T) {
	var out strings.Builder
	enc, _ := textWriteFormat.newEncoder(&out, textSchema)
	err := enc.encode(&schemas.Batch{Rows: []schemas.Row{{nil}, {"a"}}}, textSchema)
	if err != nil || enc.finish() != nil || out.String() != "\na\n" {
		t.Errorf("null: %q, %v", out.String(), err)
	}
	if err := enc.encode(&schemas.Batch{Rows: []schemas.Row{{int64(3)}}}, textSchema); err == nil || !strings.Contains(err.Error(), "integer value") {
		t.Errorf("integer: %v", err)
	}
}

// TestSinkConcurrentLanesAndCommit runs lanes on their own goroutines, each going on to the
// next epoch while the previous one commits, as the runner does (run it with -race).
func TestSinkConcurrentLanesAndCommit(t *testing.T) {
	forEachSink(t, func(t *testing.T, h *harness) {
		h.lanes = 4
		const epochs, perLane = 6, 50
		s, _ := h.open()
		defer s.Close(context.Background())
		ctx := context.Background()
		flushed := make(chan uint64, h.lanes*epochs)
		errs := make(chan error, h.lanes)
		for lane := range h.lanes {
			go func() {
				for e := uint64(1); e <= epochs; e++ {
					b := &schemas.Batch{Schema: h.kind.schema}
					for i := range perLane {
						b.Rows = append(b.Rows, h.kind.row(((int(e)-1)*h.lanes+lane)*perLane+i))
					}
					if err := s.Writer(lane).Write(ctx, b); err != nil {
						errs <- err
						return
					}
					if err := s.Writer(lane).Flush(ctx, e); err != nil {
						errs <- err
						return
					}
					flushed <- e
				}
				errs <- nil
			}()
		}
		count := map[uint64]int{}
		for next := uint64(1); next <= epochs; {
			count[<-flushed]++
			for count[next] == h.lanes {
				h.commit(s, next, int(next)*h.lanes*perLane)
				next++
			}
		}
		for range h.lanes {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		h.checkExactly(epochs * h.lanes * perLane)
	})
}
