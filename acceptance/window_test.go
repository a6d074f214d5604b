package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/iceberg"
	"github.com/twmb/franz-go/pkg/kgo"
)

// windowRecords is how many records the window tests produce: record i has event time
// windowTime(i), 20 windows of 10 s in all, a little out of order.
const windowRecords = 60_000

func windowTime(i int) int64 { return int64(i)*200/windowRecords + int64(i*7919%5) }

// windowPipeline is ReadFromKafka -> AssignTimestamps(ts) -> Combine(fixed 10 s) ->
// WriteToIceberg: per window, its first event time, its records and the sum of their ids.
func windowPipeline(addr, topic, lateness string, w icebergWarehouse) string {
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
      schema: {type: object, properties: {id: {type: integer}, ts: {type: integer}}, required: [id, ts]}
  transforms:
    - type: AssignTimestamps
      config: {timestamp: ts}
    - type: Combine
      windowing: {type: fixed, size: 10s, allowed_lateness: %s}
      config:
        group_by: []
        combine:
          start: {value: ts, fn: min}
          records: {value: id, fn: count}
          total: {value: id, fn: sum}
%soptions:
  name: windows
  checkpoint_interval: 200ms
`, addr, topic, lateness, w.sink("db.windows", "0.2"))
}

// produceWindowed produces the window tests' records round-robin over 8 partitions in bursts
// over about d, in the order of their ids or shuffled, and returns when they are all written.
func produceWindowed(t *testing.T, addr, topic string, d time.Duration, shuffle bool) <-chan error {
	order := make([]int, windowRecords)
	for i := range order {
		order[i] = i
	}
	if shuffle {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	cl := devClient(t, addr, kgo.ProducerLinger(5*time.Millisecond), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const burst = 1000
		tick := time.NewTicker(d / (windowRecords / burst))
		defer tick.Stop()
		for n, i := range order {
			if n%burst == 0 {
				<-tick.C
			}
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"id": %d, "ts": %d}`, i, windowTime(i))}, nil)
		}
		done <- cl.Flush(ctx)
	}()
	return done
}

// windowResult is one window's row in the table.
type windowResult struct{ records, total int64 }

// wantWindows returns, by window (its start / 10 s), the records and id sum it must hold.
func wantWindows() map[int64]windowResult {
	want := map[int64]windowResult{}
	for i := range windowRecords {
		w := windowTime(i) / 10
		r := want[w]
		r.records++
		r.total += int64(i)
		want[w] = r
	}
	return want
}

// checkWindowTable reads the table with iceberg-go and compares it with wantWindows: every
// window once, with its records and sum.
func checkWindowTable(t *testing.T, w icebergWarehouse) {
	t.Helper()
	tbl, err := w.load(t, w.catalog(t), "db.windows")
	if err != nil {
		t.Fatalf("load the table: %v", err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("start", "records", "total")).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	got := map[int64][]windowResult{}
	for tr.Next() {
		rec := tr.RecordBatch()
		col := func(name string) *array.Int64 { return rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.Int64) }
		start, records, total := col("start"), col("records"), col("total")
		for i := range int(rec.NumRows()) {
			got[start.Value(i)/10] = append(got[start.Value(i)/10], windowResult{records.Value(i), total.Value(i)})
		}
	}
	want := wantWindows()
	for win, r := range want {
		if len(got[win]) != 1 || got[win][0] != r {
			t.Errorf("window %d (from %d s): rows %+v, want one with %+v", win, win*10, got[win], r)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d windows in the table, want %d", len(got), len(want))
	}
}

// TestWindowsKafkaToIceberg: records spread over 20 fixed windows of 10 s, in shuffled order
// over 8 partitions (allowed_lateness covers the whole range): the per-window results in the
// table are exact.
func TestWindowsKafkaToIceberg(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr := startDevKafka(t, "--topic", "win:8").addr
	w := icebergWarehouse{dir: t.TempDir()}
	if err := <-produceWindowed(t, addr, "win", time.Second, true); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, windowPipeline(addr, "win", "5m", w))
	if out, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	checkWindowTable(t, w)
}

// TestCrashWindowsKafkaToIceberg SIGKILLs the windowed pipeline 20 times while the records
// flow in; after a final drain the table equals a crash-free run's: no window counted
// twice, none missing, none partial.
func TestCrashWindowsKafkaToIceberg(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr := startDevKafka(t, "--topic", "win:8").addr
	w := icebergWarehouse{dir: t.TempDir()}
	produced := produceWindowed(t, addr, "win", 8*time.Second, false)
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, windowPipeline(addr, "win", "30s", w))
	kills, finished := killer{pipeline: pipeline, minDelay: 100 * time.Millisecond, spread: 600 * time.Millisecond,
		progress: func() int { return w.committedRows(t, w.catalog(t), "db.windows") },
		// Every checkpoint's state goes to a state file (docs/iceberg.md "Window state").
		env: []string{iceberg.StateInlineEnv + "=0"}}.run(t, 20)
	if finished {
		t.Fatalf("run %d ended by itself though its source has no end", kills+1)
	}
	before := w.committedRows(t, w.catalog(t), "db.windows")
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	final := exec.Command(binary, "run", pipeline, "--stop-at-end")
	final.Env = append(os.Environ(), iceberg.StateInlineEnv+"=0")
	if out, err := final.CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	checkWindowTable(t, w)
	// The newest checkpoint's state file is there; the others were removed but for at most
	// one orphan per kill (written for a commit that never happened, or committed and not yet
	// removed when the run was killed).
	tbl, err := w.load(t, w.catalog(t), "db.windows")
	if err != nil {
		t.Fatal(err)
	}
	newest := tbl.CurrentSnapshot().Summary.Properties["sluice.state-file"]
	files, err := filepath.Glob(filepath.Join(w.root(), "db.db", "windows", "data", "sluice-state-*"))
	if err != nil {
		t.Fatal(err)
	}
	if newest == "" || !slices.Contains(files, strings.TrimPrefix(newest, "file://")) || len(files) > kills+1 {
		t.Errorf("state files %v after %d kills; the newest checkpoint names %q", files, kills, newest)
	}
	t.Logf("%d kills; %d windows committed by the killed runs, %d records checked; %d state files left", kills, before, windowRecords, len(files))
}
