package acceptance

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/chaos/harness"
)

// TestKafkaGroupHandOverThreeCopies is the hand-over recipe that once duplicated output with no
// crash at all: three copies of an exactly-once Kafka -> MapToFields -> Kafka pipeline in one
// consumer group, only starts and SIGTERMs, while records flow in. Every graceful leave hands
// partitions over; a copy that started after others committed must not carry their offsets
// into a later hand-over. Debian's kcat (librdkafka), a client sluice did not write, reads the
// output read_committed; without kcat, franz-go reads it.
func TestKafkaGroupHandOverThreeCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run of three copies; skipped with -short")
	}
	t.Parallel()
	const records = 7500
	addr, in := groupInput(t, "handover_in")
	run := fmt.Sprintf("handover_%d", time.Now().UnixNano())
	out := "out_" + run
	sink := fmt.Sprintf("  sink:\n    type: WriteToKafka\n    config:\n      bootstrap_servers: %s\n      topic: %s\n      format: JSON\n", addr, out)
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, groupPipeline(addr, in, run, "100ms", sink))
	produced := produceSteadily(t, addr, in, records, 12*time.Second)
	copies := map[string]*runningCopy{}
	start := func(name string) {
		copies[name] = startCopy(t, pipeline, name)
		copies[name].waitFor(t, "partitions assigned", 30*time.Second)
	}
	term := func(name string) { copies[name].stop(t, syscall.SIGTERM) }
	// Each join makes running copies hand partitions over and go on committing; each leave
	// hands a copy's partitions to the others.
	start("a")
	time.Sleep(time.Second)
	start("b")
	start("c") // c carries a's and b's offsets from its start
	for _, name := range []string{"a", "b", "c", "a", "b"} {
		time.Sleep(time.Second)
		term(name)
		time.Sleep(500 * time.Millisecond)
		start(name)
	}
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	time.Sleep(time.Second)
	term("a")
	term("b")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if res, err := exec.CommandContext(ctx, binary, "run", pipeline, "--stop-at-end", "--instance", "c").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen, skipped, err := harness.KcatIDs(ctx, addr, out)
	reader := "kcat"
	if err != nil {
		t.Fatal(err)
	}
	if seen == nil {
		seen, reader = countIDs(t, addr, out), "franz-go ("+skipped+")"
	}
	dups := checkAllIDs(t, "exactly_once", records, seen)
	t.Logf("%d records in, %d distinct ids out, %d duplicates, read by %s", records, len(seen), dups, reader)
}
