package bigquery

import (
	"testing"

	"go.uber.org/goleak"
)

// ignoredGoroutines are goroutines of other code that outlive the tests by design: the
// BigQuery client imports OpenCensus, whose view worker starts at init; managedwriter cancels a
// replaced connection's context 20 s later, to let its queued writes drain
// (gracefulReconnectDuration), from a goroutine that sleeps until then even when the client is
// closed. The bqemulator build adds the emulator's (emulator_leaks_test.go).
var ignoredGoroutines = []goleak.Option{
	goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	goleak.IgnoreAnyFunction("cloud.google.com/go/bigquery/storage/managedwriter.(*connection).getStream.func1"),
}

// TestMain fails the package's tests when a goroutine outlives them: a managedwriter stream, a
// client connection or a loopback server left open by a sink that was not closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, ignoredGoroutines...)
}
