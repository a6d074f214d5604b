package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// TestShardsSharedByLanes: with num_shards 2 and 3 lanes, lanes 0 and 2 share shard 0. Lane 0
// flushes epoch 1 and writes epoch 2 while lane 2 still writes epoch 1: each row lands in the
// file of its own epoch, and a shard's file is finished only when both lanes flushed.
// The runner's epochs may be numbered after the guessed ones (a restart): files move.
func TestShardsSharedByLanes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	c, _ := mustBuild(t, fmt.Sprintf("type: WriteToText\nconfig:\n  path: %q\n  num_shards: 2\n", dir), textSchema)
	s := c.(*sink)
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 3}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	write := func(lane int, lines ...string) {
		t.Helper()
		b := &schemas.Batch{Schema: textSchema}
		for _, l := range lines {
			b.Rows = append(b.Rows, schemas.Row{l})
		}
		if err := s.Writer(lane).Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	flush := func(lane int, epoch uint64) {
		t.Helper()
		if err := s.Writer(lane).Flush(ctx, epoch); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(epoch uint64) {
		t.Helper()
		if err := s.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: "p", Epoch: epoch, Next: schemas.Offsets{}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Epochs 5 and 6 while the lanes guess 1 and 2, as after a restart behind another sink.
	write(0, "a1")
	write(2, "c1")
	write(1, "b1")
	flush(0, 5)
	write(0, "a2") // epoch 6, into shard 0's next file
	if _, err := os.Stat(filepath.Join(dir, tmpName(5), "shard-0-of-2.txt")); err == nil {
		t.Error("shard 0 of epoch 5 finished before lane 2 flushed it")
	}
	write(2, "c1b")
	flush(1, 5)
	flush(2, 5)
	commit(5)
	write(2, "c2")
	flush(0, 6)
	flush(1, 6)
	flush(2, 6)
	commit(6)
	for epoch, want := range map[uint64]map[string][]string{
		5: {"shard-0-of-2.txt": {"a1", "c1", "c1b"}, "shard-1-of-2.txt": {"b1"}},
		6: {"shard-0-of-2.txt": {"a2", "c2"}},
	} {
		edir := filepath.Join(dir, epochName(epoch))
		entries, err := os.ReadDir(edir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want)+1 { // and the checkpoint
			t.Errorf("epoch %d holds %d entries, want %d files and the checkpoint", epoch, len(entries), len(want))
		}
		for name, lines := range want {
			data, err := os.ReadFile(filepath.Join(edir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := strs(splitLines(data[:len(data)-1])); !slices.Equal(got, lines) {
				t.Errorf("epoch %d %s holds %q, want %q", epoch, name, got, lines)
			}
		}
	}
}
