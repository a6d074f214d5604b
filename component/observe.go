package component

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/schemas"
)

// This file holds what components tell an operator through the runner: where sources start
// and how far they are (the run's first lines, progress lines and lag metrics), what sinks
// wrote, and a client library's own metrics (docs/operations.md, "Metrics").

// Progress is implemented by sources that can say where each partition started, and where it
// is, from any goroutine while Read runs (ReadFromKafka). With EndOffsets it gives the lag.
type Progress interface {
	// Starts returns where each partition started reading in this run, and why. It is
	// called after Open; a source in a consumer group includes the partitions it was given
	// since (a partition given again replaces its earlier start).
	Starts() []Start
	// Position returns the next offset of every partition, as Offsets does, but may be
	// called from any goroutine.
	Position() schemas.Offsets
}

// Start is where one partition starts reading.
type Start struct {
	Partition
	// Offset is the first offset read.
	Offset int64
	// From says why it starts there (StartCheckpoint, ...).
	From StartFrom
	// End is where the partition ended when reading started (the backlog's end), or -1
	// when unknown.
	End int64
}

// StartFrom is why a partition starts where it does.
type StartFrom string

// Why partitions start where they do.
const (
	StartCheckpoint StartFrom = "checkpoint"   // where the sinks' last commit left it
	StartGroup      StartFrom = "group"        // the consumer group's committed offset: no checkpoint
	StartEarliest   StartFrom = "earliest"     // auto_offset_reset earliest: no checkpoint or group offset
	StartLatest     StartFrom = "latest"       // auto_offset_reset latest: only records written from now on
	StartNew        StartFrom = "newpartition" // new since the last commit: from its beginning
)

// startWhy says what each way of starting means.
var startWhy = map[StartFrom]string{
	StartCheckpoint: "at the last commit (the sinks' checkpoint)",
	StartGroup:      "at the consumer group's committed offset (no checkpoint)",
	StartEarliest:   "at the earliest offset (auto_offset_reset earliest: no checkpoint or group offset)",
	StartLatest:     "at the latest offset (auto_offset_reset latest: no checkpoint or group offset; only records written from now on are read)",
	StartNew:        "at the beginning (partitions new since the last commit)",
}

// maxListedStarts bounds the partitions a start line lists one by one.
const maxListedStarts = 8

// DescribeStarts summarises where partitions start, for the log line a source's start gets
// (docs/operations.md, "Where a run starts"): why, as counts of partitions per reason ("7
// partitions at the last commit (...); 1 partition at the beginning (...)"); at, the first
// few partitions with their offsets and reasons ("kafka:t[0]=5120 (checkpoint), ..."); and
// the backlog, the offsets between the starts and the partitions' ends.
func DescribeStarts(starts []Start) (why, at string, backlog int64) {
	starts = slices.SortedFunc(slices.Values(starts), func(a, b Start) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), cmp.Compare(a.Partition.Partition, b.Partition.Partition))
	})
	count := map[StartFrom]int{}
	var order []StartFrom
	var list, reasons []string
	for i, st := range starts {
		if count[st.From] == 0 {
			order = append(order, st.From)
		}
		count[st.From]++
		if st.End > st.Offset {
			backlog += st.End - st.Offset
		}
		if i < maxListedStarts {
			list = append(list, fmt.Sprintf("%s[%d]=%d (%s)", st.Source, st.Partition.Partition, st.Offset, st.From))
		}
	}
	if len(starts) > maxListedStarts {
		list = append(list, fmt.Sprintf("and %d more", len(starts)-maxListedStarts))
	}
	for _, f := range order {
		noun := "partitions"
		if count[f] == 1 {
			noun = "partition"
		}
		reasons = append(reasons, fmt.Sprintf("%d %s %s", count[f], noun, startWhy[f]))
	}
	return strings.Join(reasons, "; "), strings.Join(list, ", "), backlog
}

// Measured is implemented by sinks that count what they wrote to their target in this run,
// committed or not yet (an epoch that is not committed is written again): data files (0 for
// sinks that write records, not files) and bytes as written (encoded, before compression by a
// client or a file format's own compression where the sink cannot see it).
type Measured interface {
	Written() (files, bytes int64)
}

// Instrumented is implemented by components whose client library keeps metrics of its own
// (ReadFromKafka and WriteToKafka: franz-go's kprom). When the run exports metrics, the runner
// calls Instrument before Open with the run's registry and the constant labels that name the
// component (pipeline, and source or sink); the component registers its collectors there as
// its clients start and unregisters them as they close. Registration must not panic: a
// conflict is the component's to resolve or drop.
type Instrumented interface {
	Instrument(reg prometheus.Registerer, labels prometheus.Labels)
}
