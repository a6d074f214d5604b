package iceberg

import (
	"fmt"
	"os"
	"time"
)

// PauseEnv names the environment variable of a test hook for crash tests: with
// SLUICE_TEST_ICEBERG_PAUSE=100ms every Commit pauses that long at each of its steps (the
// epoch's data files and manifests are written but not committed; the catalog has committed
// but the reply is not yet used), and writes "iceberg-pause STEP" and "iceberg-resume STEP"
// lines to stderr, so that a SIGKILL lands there and the test can tell where it landed.
const PauseEnv = "SLUICE_TEST_ICEBERG_PAUSE"

// pauseHook returns the hook that PauseEnv asks for, or nil.
func pauseHook() func(step string) error {
	v := os.Getenv(PauseEnv)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", PauseEnv, v)
		return nil
	}
	return func(step string) error {
		fmt.Fprintf(os.Stderr, "iceberg-pause %s\n", step)
		time.Sleep(d)
		fmt.Fprintf(os.Stderr, "iceberg-resume %s\n", step)
		return nil
	}
}
