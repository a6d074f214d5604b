package component

import (
	"fmt"
	"testing"
)

// The start line counts partitions per reason in the order they first come, lists the first
// eight with their offsets, and sums the backlog of those with records left.
func TestDescribeStarts(t *testing.T) {
	var starts []Start
	for p := int32(9); p >= 0; p-- { // out of order: the line sorts them
		st := Start{Partition: Partition{Source: "kafka:t", Partition: p}, Offset: 100, From: StartCheckpoint, End: 110}
		if p == 3 {
			st = Start{Partition: st.Partition, Offset: 0, From: StartNew, End: 5}
		}
		if p == 4 {
			st.End = -1 // unknown: no backlog
		}
		starts = append(starts, st)
	}
	why, at, backlog := DescribeStarts(starts)
	if want := "9 partitions at the last commit (the sinks' checkpoint); 1 partition at the beginning (partitions new since the last commit)"; why != want {
		t.Errorf("why = %q, want %q", why, want)
	}
	want := ""
	for p := range 8 {
		if p > 0 {
			want += ", "
		}
		if p == 3 {
			want += "kafka:t[3]=0 (newpartition)"
			continue
		}
		want += fmt.Sprintf("kafka:t[%d]=100 (checkpoint)", p)
	}
	if want += ", and 2 more"; at != want {
		t.Errorf("at = %q, want %q", at, want)
	}
	if backlog != 8*10+5 {
		t.Errorf("backlog = %d, want 85", backlog)
	}
}
