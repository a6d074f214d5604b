package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// TestCDCStreaming: a streaming CDC source emits the rows of each append snapshot, in the
// table's order, including snapshots committed while it runs; a compaction (a replace
// snapshot) between them is passed over, not emitted again.
func TestCDCStreaming(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.cdc")
	w.appendEvents("db.cdc", 0, 100)
	src := w.source("ReadFromIcebergCDC", "db.cdc", "streaming: true", "starting_strategy: earliest", "poll_interval_seconds: 20ms")
	openSource(t, src, nil)
	appended := make(chan error, 1)
	go func() {
		defer close(appended)
		time.Sleep(50 * time.Millisecond)
		w.appendEvents("db.cdc", 100, 200)
		w.compact("db.cdc")
		time.Sleep(50 * time.Millisecond)
		w.appendEvents("db.cdc", 200, 300)
	}()
	rows, pos, err := readN(t, src, 300, 20*time.Second)
	if err != nil {
		t.Fatalf("after %d rows: %v", len(rows), err)
	}
	<-appended
	if ids := idsOf(rows); !slices.Equal(ids, seq(0, 300)) {
		t.Fatalf("ids %v..., want 0..299 in order", ids[:min(len(ids), 20)])
	}
	for i := 1; i < len(pos); i++ {
		if pos[i].Source != "iceberg-cdc:db.cdc" || pos[i].Offset <= pos[i-1].Offset {
			t.Fatalf("positions %v then %v do not grow", pos[i-1], pos[i])
		}
	}
	more, _, err := readN(t, src, 1, 300*time.Millisecond)
	if len(more) > 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the appends: %d more rows (%v), err %v", len(more), more, err)
	}
}

// TestCDCEpochsShorterThanALoad: the runner cancels a Read whenever an epoch is due. When
// loading the table takes longer than that (a remote catalog, a busy machine), the load goes
// on in the background and the next Read takes its result: new snapshots are still found.
// Before, every load was cancelled with its Read and the source never saw a new snapshot.
func TestCDCEpochsShorterThanALoad(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.slow")
	src := w.source("ReadFromIcebergCDC", "db.slow", "streaming: true", "starting_strategy: earliest", "poll_interval_seconds: 1ms")
	openSource(t, src, nil)
	w.appendEvents("db.slow", 0, 50)
	w.appendEvents("db.slow", 50, 100)
	// A Read lasts 200 µs: less than a load of the table's metadata from the SQLite catalog.
	rows, _, err := readNInterrupted(t, src, 100, 20*time.Second, 200*time.Microsecond)
	if err != nil {
		t.Fatalf("after %d rows: %v", len(rows), err)
	}
	if ids := idsOf(rows); !slices.Equal(ids, seq(0, 100)) {
		t.Fatalf("ids %v..., want 0..99 in order", ids[:min(len(ids), 20)])
	}
}

// TestCDCResume stops in the middle of a snapshot and restarts from the offsets, as after a
// crash: every row comes once, none is missing.
func TestCDCResume(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.res")
	for i := range 3 {
		w.appendEvents("db.res", i*3000, (i+1)*3000)
	}
	src := w.source("ReadFromIcebergCDC", "db.res")
	openSource(t, src, nil)
	first, _, err := readN(t, src, 4000, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	from := src.Offsets()
	_ = src.Close()
	w.compact("db.res")
	w.appendEvents("db.res", 9000, 9500)

	again := w.source("ReadFromIcebergCDC", "db.res")
	openSource(t, again, from)
	rest, _ := readToEnd(t, again)
	if got := append(idsOf(first), idsOf(rest)...); !slices.Equal(got, seq(0, 9500)) {
		t.Fatalf("%d + %d rows: not 0..9499 once each, in order", len(first), len(rest))
	}
	end := again.Offsets()
	_ = again.Close()
	last := w.source("ReadFromIcebergCDC", "db.res")
	openSource(t, last, end)
	if rows, _ := readToEnd(t, last); len(rows) != 0 {
		t.Fatalf("resuming at the end read %d rows again", len(rows))
	}
	ahead := schemas.Offsets{}
	ahead.Set("iceberg-cdc:db.res", 0, cdcOffset(99, 0))
	if err := w.source("ReadFromIcebergCDC", "db.res").Open(t.Context(), ahead); err == nil || !strings.Contains(err.Error(), "the table's newest is 5") {
		t.Errorf("a checkpoint beyond the table: %v", err)
	}
}

// TestCDCBounds checks from_snapshot, to_snapshot, from_timestamp, to_timestamp,
// starting_strategy and StopAtEnd.
func TestCDCBounds(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.b")
	var snaps []int64
	var times []int64
	for i := range 4 {
		s := w.appendEvents("db.b", i*10, (i+1)*10)
		snaps, times = append(snaps, s.SnapshotID), append(times, s.TimestampMs)
		time.Sleep(5 * time.Millisecond) // distinct commit times
		if i == 1 {
			w.compact("db.b")
		}
	}
	for _, c := range []struct {
		extra []string
		ids   []int64
	}{
		{nil, seq(0, 40)},
		{[]string{fmt.Sprintf("from_snapshot: %d", snaps[1]), fmt.Sprintf("to_snapshot: %d", snaps[2])}, seq(10, 30)},
		{[]string{fmt.Sprintf("from_timestamp: %d", times[2])}, seq(20, 40)},
		{[]string{fmt.Sprintf("to_timestamp: %d", times[0])}, seq(0, 10)},
		{[]string{"starting_strategy: latest"}, nil},
		{[]string{"keep: [id]", "filter: id % 10 == 0"}, []int64{0, 10, 20, 30}},
	} {
		src := w.source("ReadFromIcebergCDC", "db.b", c.extra...)
		openSource(t, src, nil)
		if rows, _ := readToEnd(t, src); !slices.Equal(idsOf(rows), c.ids) {
			t.Errorf("%v: ids %v, want %v", c.extra, idsOf(rows), c.ids)
		}
	}

	// Streaming with StopAtEnd ends at the snapshot current at Open.
	src := w.source("ReadFromIcebergCDC", "db.b", "streaming: true", "starting_strategy: earliest")
	src.(component.Bounded).StopAtEnd()
	openSource(t, src, nil)
	w.appendEvents("db.b", 40, 50)
	if rows, _ := readToEnd(t, src); !slices.Equal(idsOf(rows), seq(0, 40)) {
		t.Errorf("stop at end: ids %v", idsOf(rows))
	}

	_, _, err := buildSource(t, w.readConfig("ReadFromIcebergCDC", "db.b", "from_snapshot: 12345"))
	if err != nil {
		t.Fatal(err)
	}
	bad := w.source("ReadFromIcebergCDC", "db.b", "from_snapshot: 12345")
	if err := bad.Open(t.Context(), nil); err == nil || !errorContains(err, "from_snapshot 12345 is not a snapshot of the table") {
		t.Errorf("unknown from_snapshot: %v", err)
	}
}

// TestCDCWaitsForTable: with a schema, a streaming source starts before its table exists
// and reads what is appended once it does.
func TestCDCWaitsForTable(t *testing.T) {
	w := newWarehouse(t)
	src := w.source("ReadFromIcebergCDC", "db.later", "streaming: true", "poll_interval_seconds: 20ms",
		"schema: {type: object, required: [id], properties: {id: {type: integer}, name: {type: string}}}", "keep: [id, name]")
	openSource(t, src, nil)
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.create("db.later")
		w.appendEvents("db.later", 0, 50)
	}()
	rows, _, err := readN(t, src, 50, 20*time.Second)
	if err != nil || !slices.Equal(idsOf(rows), seq(0, 50)) || rows[1][1] != "n1" {
		t.Fatalf("rows %v, err %v", rows, err)
	}
}

func errorContains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
