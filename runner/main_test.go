package runner

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine the run started outlives them: a lane,
// a source reader or a coordinator left behind by Execute.
func TestMain(m *testing.M) {
	// The BigQuery client imports OpenCensus, whose view worker starts at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
