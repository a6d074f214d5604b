package compactiontest

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	goiceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/iceberg"
)

// binary is the sluice binary, built with the crash tests' hooks (sluicetest).
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // the only test is skipped: do not build the binary either
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "sluice-compaction")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sluice")
	if out, err := exec.Command("go", "build", "-tags", "sluicetest", "-o", binary, "../../../cmd/sluice").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building sluice: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	messages = 90_000 // half a minute at qps
	qps      = 3000
	target   = 1 << 20 // target_file_size_mb: 1
)

// TestCompactionWhileStreaming runs a seeded generator -> WriteToIceberg pipeline for about
// half a minute with a commit every second and compaction every 5 s toward 1 MiB files. The first
// run is SIGKILLed while a compaction is staged and about to be sent, the second right after
// the catalog committed a compaction and before sluice heard of it; the third runs to the
// generator's end. Then `sluice iceberg compact` compacts what is left. The table, read with
// iceberg-go's scan, must hold every message exactly once; each compaction snapshot must hold
// the same rows as its parent; the data files must be near the target (their distribution
// is logged), and `sluice status` must show the files and the last compaction.
func TestCompactionWhileStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("half a minute of streaming; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: StreamingDataGenerator
    config:
      seed: 11
      qps: %d
      messages_limit: %d
      schema: |
        {"id": {{index()}}, "event": "{{uuid()}}", "user": "{{username()}}", "score": {{integer(0, 10000)}}, "note": "{{alpha(40, 80)}}"}
  sink:
    type: WriteToIceberg
    config:
      table: db.events
      triggering_frequency_seconds: 1s
      catalog_properties: {type: sql, uri: %s, warehouse: %s}
      compaction: {target_file_size_mb: 1, every: 5s}
options:
  name: compaction
`, qps, messages, filepath.Join(dir, "catalog.db"), filepath.Join(dir, "wh")))

	start := time.Now()
	killAt(t, pipeline, "compact-before")
	killAt(t, pipeline, "compact-sent")
	cmd := exec.Command(binary, "run", pipeline)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the last run: %v\n%s", err, out)
	}
	rounds := strings.Count(string(out), `"msg":"compacted"`)
	t.Logf("streamed %d messages in %v over 3 runs; the last run committed %d compactions", messages, time.Since(start).Round(time.Second), rounds)
	if rounds == 0 {
		t.Errorf("the last run compacted nothing:\n%s", out)
	}
	if out, err := exec.Command(binary, "iceberg", "compact", "--pipeline", pipeline).CombinedOutput(); err != nil {
		t.Fatalf("sluice iceberg compact: %v\n%s", err, out)
	} else {
		t.Logf("sluice iceberg compact: %s", strings.TrimSpace(string(out)))
	}

	cat := openCatalog(t, dir)
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "events"})
	if err != nil {
		t.Fatal(err)
	}
	ids := scanIDs(t, tbl, tbl.CurrentSnapshot().SnapshotID)
	if len(ids) != messages {
		t.Errorf("the table holds %d rows, want %d", len(ids), messages)
	}
	for id, n := range ids {
		if n != 1 || id < 0 || id >= messages {
			t.Fatalf("id %d is in the table %d times (ids 0..%d once each)", id, n, messages-1)
		}
	}
	compared := sameRowsAcrossCompactions(t, tbl)
	sizes := dataFileSizes(t, tbl)
	t.Logf("%d compactions checked (rows identical before and after); data files (KiB): %v", compared, sizes)
	near := 0
	for _, kib := range sizes {
		if kib >= target/2/1024 && kib <= 3*target/1024 {
			near++
		}
	}
	if len(sizes) == 0 || near < len(sizes)-4 { // a partition keeps fewer than min_input_files small ones
		t.Errorf("%d of %d data files are within 0.5-3x the 1 MiB target", near, len(sizes))
	}
	checkStatus(t, pipeline, len(sizes))
}

// killAt runs the pipeline with compactions pausing at each step and SIGKILLs it once one
// pauses at step.
func killAt(t *testing.T, pipeline, step string) {
	t.Helper()
	cmd := exec.Command(binary, "run", pipeline)
	cmd.Env = append(os.Environ(), iceberg.CompactPauseEnv+"=1500ms")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == "iceberg-compact-pause "+step {
				found <- true
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("the run ended before a compaction reached %s", step)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no compaction reached %s within 60 s", step)
	}
	_ = cmd.Wait()
	t.Logf("killed during a compaction at %s", step)
}

func openCatalog(t *testing.T, dir string) catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(context.Background(), "sluice", goiceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri":       "file:" + filepath.Join(dir, "catalog.db") + "?_pragma=busy_timeout(10000)",
		"warehouse": "file://" + filepath.Join(dir, "wh"),
	})
	if err != nil {
		t.Fatalf("open the catalog: %v", err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

// rowsAt scans the snapshot with iceberg-go and returns each row by id, as text.
func rowsAt(t *testing.T, tbl *table.Table, snapshot int64) map[int64]string {
	t.Helper()
	at, err := tbl.Scan(table.WithSnapshotID(snapshot)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan snapshot %d: %v", snapshot, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 64<<10)
	defer tr.Release()
	out := map[int64]string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			var row strings.Builder
			for c := range int(rec.NumCols()) {
				row.WriteString(rec.Column(c).ValueStr(i) + "|")
			}
			id := ids.Value(i)
			if _, dup := out[id]; dup {
				t.Fatalf("snapshot %d holds id %d twice", snapshot, id)
			}
			out[id] = row.String()
		}
	}
	return out
}

func scanIDs(t *testing.T, tbl *table.Table, snapshot int64) map[int64]int {
	out := map[int64]int{}
	for id := range rowsAt(t, tbl, snapshot) {
		out[id]++
	}
	return out
}

// sameRowsAcrossCompactions checks that every compaction (replace snapshot) in the table's
// history holds exactly the rows of its parent, and returns how many it checked.
func sameRowsAcrossCompactions(t *testing.T, tbl *table.Table) int {
	t.Helper()
	meta := tbl.Metadata()
	n := 0
	for _, snap := range table.AncestorsOf(meta.CurrentSnapshot().SnapshotID, meta.SnapshotByID) {
		if snap.Summary == nil || snap.Summary.Operation != table.OpReplace || snap.ParentSnapshotID == nil {
			continue
		}
		before, after := rowsAt(t, tbl, *snap.ParentSnapshotID), rowsAt(t, tbl, snap.SnapshotID)
		if len(before) != len(after) {
			t.Fatalf("compaction %d: %d rows, its parent %d", snap.SnapshotID, len(after), len(before))
		}
		for id, row := range before {
			if after[id] != row {
				t.Fatalf("compaction %d changed row %d:\n before %s\n after  %s", snap.SnapshotID, id, row, after[id])
			}
		}
		n++
	}
	if n == 0 {
		t.Error("no compaction in the table's history")
	}
	return n
}

// dataFileSizes returns the sizes of the current snapshot's data files in KiB, sorted.
func dataFileSizes(t *testing.T, tbl *table.Table) []int64 {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, task := range tasks {
		out = append(out, task.File.FileSizeBytes()/1024)
	}
	slices.Sort(out)
	return out
}

// checkStatus checks what `sluice status --json` says of the table.
func checkStatus(t *testing.T, pipeline string, dataFiles int) {
	t.Helper()
	out, err := exec.Command(binary, "status", "--json", pipeline).Output()
	if err != nil {
		t.Fatalf("sluice status: %v\n%s", err, out)
	}
	var st struct {
		Sinks []struct {
			Tables []struct {
				Name           string     `json:"name"`
				DataFiles      int        `json:"data_files"`
				DeleteFiles    int        `json:"delete_files"`
				AvgFileBytes   int64      `json:"avg_data_file_bytes"`
				LastCompaction *time.Time `json:"last_compaction"`
				Compaction     string     `json:"compaction"`
			} `json:"tables"`
		} `json:"sinks"`
	}
	if err := json.Unmarshal(out, &st); err != nil || len(st.Sinks) != 1 || len(st.Sinks[0].Tables) != 1 {
		t.Fatalf("sluice status --json: %v\n%s", err, out)
	}
	tb := st.Sinks[0].Tables[0]
	if tb.DataFiles != dataFiles || tb.DeleteFiles != 0 || tb.AvgFileBytes < target/4 || tb.LastCompaction == nil || !strings.HasPrefix(tb.Compaction, "rewrote") {
		t.Errorf("sluice status shows %+v; want %d data files, no delete files, their average size, and the last compaction", tb, dataFiles)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
