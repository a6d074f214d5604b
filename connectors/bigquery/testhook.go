package bigquery

// PauseEnv names the environment variable of a test hook for crash tests, read only by a
// binary built with the build tag sluicetest (cmd/sluice's tests build it so): with
// SLUICE_TEST_BIGQUERY_PAUSE=100ms every Commit pauses that long at each of its steps
// ("finalized": the epoch's streams are finalized and no intent is saved; "intent-saved": the
// intent is saved and the streams are not committed; "committed": BigQuery committed them and
// the checkpoint is not saved, so the source's offsets are not committed either), and writes
// "bigquery-pause STEP" and "bigquery-resume STEP" lines to stderr, so that a SIGKILL lands
// there and the test can tell where it landed.
const PauseEnv = "SLUICE_TEST_BIGQUERY_PAUSE"

// stepHook, when set (by tests), is called at each step of Commit; an error stops the
// commit there, as a crash would.
var stepHook func(step string) error

// testPause calls stepHook, and in a sluicetest build pauses at step when PauseEnv asks.
func testPause(step string) error {
	if stepHook != nil {
		if err := stepHook(step); err != nil {
			return err
		}
	}
	return pauseAt(step)
}
