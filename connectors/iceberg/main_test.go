package iceberg

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine the sink or the CDC source started (a
// maintenance run, a reader's prefetch) outlives the test that opened it.
func TestMain(m *testing.M) {
	// Imported through the module's BigQuery client: OpenCensus's view worker starts at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
