package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// Every partition of the checkpoint or of the ends is listed, in order; the lag is known only
// where both are, never negative, and the sink's lag sums the known ones.
func TestPartitionsOf(t *testing.T) {
	committed, end := schemas.Offsets{}, schemas.Offsets{}
	committed.Set("kafka:b", 0, 40)
	committed.Set("kafka:a", 1, 10)
	committed.Set("kafka:a", 0, 7) // ahead of the end read a moment before: lag 0
	end.Set("kafka:a", 0, 5)
	end.Set("kafka:a", 1, 25)
	end.Set("kafka:a", 2, 3) // not committed yet
	parts, lag := partitionsOf(committed, end)
	var got []string
	for _, p := range parts {
		got = append(got, p.Source+"/"+show(p.Committed)+"/"+show(p.End)+"/"+show(p.Lag))
	}
	want := "kafka:a/7/5/0 kafka:a/10/25/15 kafka:a/-/3/- kafka:b/40/-/-"
	if strings.Join(got, " ") != want {
		t.Errorf("partitions %q, want %q", strings.Join(got, " "), want)
	}
	if lag == nil || *lag != 15 {
		t.Errorf("lag %v, want 15", lag)
	}
	if _, lag := partitionsOf(committed, schemas.Offsets{}); lag != nil {
		t.Errorf("lag %d with no end known, want none", *lag)
	}
}

// The table says what each sink's state means: its lag, nothing committed, or its error.
func TestPrint(t *testing.T) {
	lag := int64(15)
	compacted := time.Now().Add(-90 * time.Second)
	st := Pipeline{Pipeline: "orders", File: "orders.yaml", SpecHash: "abc", Sinks: []Sink{
		{Name: "lake", Type: "WriteToIceberg", Committed: true, Epoch: 3, Lag: &lag, WrittenBy: &WrittenBy{SpecHash: "abc", Version: "1.2"},
			Tables: []Table{{Name: "db.orders", Rows: 1000, DataFiles: 4, DeleteFiles: 2, AvgFileBytes: 3 << 20, LastCompaction: &compacted, Compaction: "rewrote 12 data files"},
				{Name: "db.fresh", DataFiles: 1, AvgFileBytes: 2048}}},
		{Name: "fresh", Type: "WriteToKafka"},
		{Name: "broken", Type: "WriteToBigQuery", Error: "no table"},
	}}
	var b bytes.Buffer
	Print(&b, st)
	for _, want := range []string{"pipeline orders (orders.yaml)", "lake: lag 15", "fresh: nothing committed yet", "broken: no table",
		"lake: last commit written by spec abc, sluice 1.2", "this file is spec abc",
		"lake: table db.orders: 1000 rows, 4 data files of 3.0 MiB on average, 2 delete files; last compaction ", "(1m30s ago): rewrote 12 data files",
		"lake: table db.fresh: 0 rows, 1 data files of 2.0 KiB on average, 0 delete files; never compacted"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
