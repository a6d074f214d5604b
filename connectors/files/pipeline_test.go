package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// miniRunner drives a source into a sink as the runner does, for a pipeline that only moves
// records: it reads batches, decodes them, hands each file to a lane, cuts an epoch every
// batchesPerEpoch batches (flush every lane, then Commit with the source's offsets) and, on
// restart, resumes the source from the sink's checkpoint and drops what it covers.
type miniRunner struct {
	t               *testing.T
	srcYAML         string
	sinkYAML        string
	lanes           int
	batchesPerEpoch int
}

// run runs until the source is exhausted, or until crashAt epochs were flushed, in which case
// the last of them is flushed but not committed (a crash). It returns the epochs committed.
func (r *miniRunner) run(crashAt uint64) int {
	t := r.t
	ctx := context.Background()
	c, sctx := mustBuild(t, r.srcYAML)
	src := c.(component.Source)
	k, _ := mustBuild(t, r.sinkYAML, sctx.Outputs()[0].Schema)
	sink := k.(component.Sink)
	cp, err := sink.Open(ctx, component.SinkInfo{Pipeline: "copy@1", Lanes: r.lanes})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(ctx)
	var from schemas.Offsets
	epoch := uint64(1)
	if cp != nil {
		from, epoch = cp.Next, cp.Epoch+1
	}
	if err := src.Open(ctx, from); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	lanes := map[string]int{}
	committed, batches := 0, 0
	barrier := func() bool {
		for l := range r.lanes {
			if err := sink.Writer(l).Flush(ctx, epoch); err != nil {
				t.Fatal(err)
			}
		}
		if epoch == crashAt {
			return false
		}
		if err := sink.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: "copy@1", Epoch: epoch, Next: src.Offsets()}}); err != nil {
			t.Fatal(err)
		}
		epoch++
		committed++
		return true
	}
	for {
		b, err := src.Read(ctx)
		if errors.Is(err, io.EOF) {
			barrier()
			return committed
		}
		if err != nil {
			t.Fatal(err)
		}
		err = src.Decode(ctx, b, func(tag string, out *schemas.Batch) error {
			keep := &schemas.Batch{Schema: out.Schema}
			for i, row := range out.Rows {
				if cp == nil || !cp.Next.Covers(out.Pos[i]) {
					keep.Rows = append(keep.Rows, row)
					keep.Pos = append(keep.Pos, out.Pos[i])
				}
			}
			source := out.Pos[0].Source
			lane, ok := lanes[source]
			if !ok {
				lane = len(lanes) % r.lanes
				lanes[source] = lane
			}
			return sink.Writer(lane).Write(ctx, keep)
		})
		if err != nil {
			t.Fatal(err)
		}
		if batches++; batches%r.batchesPerEpoch == 0 && !barrier() {
			return committed
		}
	}
}

// TestCopyExactlyOnce copies JSON Lines files to a WriteToJson directory and text files to a
// WriteToText one, crashing between a flush and its commit at each epoch in turn: each
// restart resumes from the sink's checkpoint, and the output holds every input line once.
func TestCopyExactlyOnce(t *testing.T) {
	in := t.TempDir()
	var want []string
	for f := range 3 {
		var b strings.Builder
		for i := range 1200 + 700*f {
			line := fmt.Sprintf(`{"id":%d,"name":"f%d-%d"}`, f*10000+i, f, i)
			b.WriteString(line + "\n")
			want = append(want, line)
		}
		writeFile(t, in, fmt.Sprintf("part-%d.jsonl", f), strings.TrimSuffix(b.String(), "\n"))
	}
	sort.Strings(want)
	for _, typ := range []string{"Json", "Text"} {
		t.Run(typ, func(t *testing.T) {
			for crashAt := uint64(1); crashAt <= 4; crashAt++ {
				out := filepath.Join(t.TempDir(), "out")
				r := &miniRunner{t: t, lanes: 2, batchesPerEpoch: 2,
					srcYAML:  fmt.Sprintf("type: ReadFrom%s\nconfig:\n  path: %q\n", typ, in),
					sinkYAML: fmt.Sprintf("type: WriteTo%s\nconfig:\n  path: %q\n", typ, out)}
				r.run(crashAt)
				r.run(crashAt + 1) // a second crash, one epoch later
				r.run(0)
				got, err := ReadCommitted(out)
				if err != nil {
					t.Fatal(err)
				}
				lines := strs(got)
				sort.Strings(lines)
				if !equalStrings(lines, want) {
					t.Fatalf("crash at epoch %d: the output holds %d lines, want the %d input lines once", crashAt, len(lines), len(want))
				}
			}
		})
	}
}
