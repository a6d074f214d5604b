package acceptance

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/iceberg"
)

// TestCrashKafkaToIceberg SIGKILLs a Kafka -> MapToFields -> WriteToIceberg pipeline at least
// 15 times at random points while records flow into its 8-partition input topic on a broker
// in another process (`sluice dev kafka`), then drains it with --stop-at-end and scans the
// table with iceberg-go: every input record must be there exactly once (exactly_once) or at
// least once (at_least_once). Every commit pauses at its steps (SLUICE_TEST_ICEBERG_PAUSE), so
// many kills land after the epoch's files are written and before the catalog commits, or
// after the catalog committed and before sluice heard of it.
func TestCrashKafkaToIceberg(t *testing.T) {
	skipIfShort(t)
	// Not in parallel with other tests: kills must land inside commits, which a busy machine
	// delays past the kills (TestCrashFileToFile).
	addr := startDevKafka(t, "--topic", "ice_exactly_once:8", "--topic", "ice_at_least_once:8").addr
	for _, c := range []struct {
		delivery string
		records  int
	}{{"exactly_once", 500_000}, {"at_least_once", 500_000}} {
		t.Run(c.delivery, func(t *testing.T) { icebergCrashRun(t, addr, c.delivery, c.records) })
	}
}

func icebergCrashRun(t *testing.T, addr, delivery string, records int) {
	const wantKills, tableName = 15, "db.events"
	dir := t.TempDir()
	w := icebergWarehouse{dir: dir}
	produced := produceSteadily(t, addr, "ice_"+delivery, records, 20*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, kafkaToIceberg(addr, "ice_"+delivery, "ice_crash_"+delivery, delivery,
		w.sink(tableName, "200ms")))

	cat := w.catalog(t)
	landed := map[string]int{} // where the kills landed
	start := time.Now()
	kills, finished := killer{pipeline: pipeline, minDelay: 100 * time.Millisecond, spread: 900 * time.Millisecond,
		env:      []string{iceberg.PauseEnv + "=80ms"},
		progress: func() int { return w.committedRows(t, cat, tableName) },
		onKill:   func(stderr string) { landed[killPoint(stderr)]++ },
	}.run(t, wantKills)
	if finished {
		t.Fatalf("run %d ended by itself though its source has no end", kills+1)
	}
	killed := time.Since(start)
	before := w.committedRows(t, cat, tableName)
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen := w.ids(t, tableName)
	dups := checkAllIDs(t, delivery, records, seen)
	if landed["after files, before commit"]+landed["after commit, before reply"] == 0 {
		t.Errorf("no kill landed in a commit (%v): the test did not test what it claims", landed)
	}
	t.Logf("%s: %d kills in %v (%v), %d input records, %d committed by the killed runs, %d rows checked, %d duplicates",
		delivery, kills, killed.Round(time.Second), landed, records, before, records+dups, dups)
}

// killPoint says where a run was killed, from the pause lines of the commit hook in its stderr.
func killPoint(stderr string) string {
	i := strings.LastIndex(stderr, "iceberg-")
	switch {
	case i < 0:
		return "before any commit"
	case strings.HasPrefix(stderr[i:], "iceberg-pause before"):
		return "after files, before commit"
	case strings.HasPrefix(stderr[i:], "iceberg-pause sent"):
		return "after commit, before reply"
	}
	return "between commits"
}
