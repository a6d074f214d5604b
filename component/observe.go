package component

import (
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
