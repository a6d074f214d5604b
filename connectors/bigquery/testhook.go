package bigquery

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// PauseEnv names the environment variable of a test hook for crash tests: with
// SLUICE_TEST_BIGQUERY_PAUSE=100ms every Commit pauses that long at each of its steps
// ("finalized": the epoch's streams are finalized and no intent is saved; "intent-saved": the
// intent is saved and the streams are not committed; "committed": BigQuery committed them and
// the checkpoint is not saved, so the source's offsets are not committed either), and writes
// "bigquery-pause STEP" and "bigquery-resume STEP" lines to stderr, so that a SIGKILL lands
// there and the test can tell where it landed.
const PauseEnv = "SLUICE_TEST_BIGQUERY_PAUSE"

var pause = sync.OnceValue(func() time.Duration {
	v := os.Getenv(PauseEnv)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", PauseEnv, v)
		return 0
	}
	return d
})

// stepHook, when set (by tests), is called at each step of Commit; an error stops the
// commit there, as a crash would.
var stepHook func(step string) error

// testPause pauses at step when PauseEnv asks for it, and calls stepHook.
func testPause(step string) error {
	if stepHook != nil {
		if err := stepHook(step); err != nil {
			return err
		}
	}
	d := pause()
	if d == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "bigquery-pause %s\n", step)
	time.Sleep(d)
	fmt.Fprintf(os.Stderr, "bigquery-resume %s\n", step)
	return nil
}
