package acceptance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/files"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaToJSON is ReadFromKafka(topic at addr, from the start) -> MapToFields -> WriteToJson(out),
// epochs every 300ms.
func kafkaToJSON(addr, topic, out string) string {
	return idsChain(addr, topic, "", fmt.Sprintf("  sink:\n    type: WriteToJson\n    config:\n      path: %s\n", out),
		"  checkpoint_interval: 300ms\n")
}

// produceIDs writes the records of ids from to to-1 in produceSteadily's shape.
func produceIDs(t *testing.T, addr, topic string, from, to int) {
	t.Helper()
	cl := devClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf(`{"id": %d, "name": "user-%d", "amount": %d.5}`, i, i%977, i%1000))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitCommitted waits until the files sink at out holds n rows, at most d.
func waitCommitted(t *testing.T, c *runningCopy, out string, n int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		lines, _ := files.ReadCommitted(out)
		if len(lines) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink holds %d rows after %v, want %d\n%s", len(lines), d, n, c.log())
		}
	}
}

// checkJSONIDs checks that the files sink at out holds ids 0 to n-1 exactly once each.
func checkJSONIDs(t *testing.T, out string, n int) {
	t.Helper()
	lines, err := files.ReadCommitted(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, l := range lines {
		var id int64
		if _, err := fmt.Sscanf(strings.TrimPrefix(string(l), `{"id":`), "%d", &id); err != nil {
			t.Fatalf("output row %s: %v", l, err)
		}
		seen[id]++
	}
	checkAllIDs(t, "exactly_once", n, seen)
}

// TestKafkaOutageIsLogged: a broker (`sluice dev kafka`, its data on disk) is killed under a
// running pipeline and comes back 3 s later on the same address. The pipeline's log must say
// when the connection was lost (which broker, what error), again while it lasts, and when it
// came back and after how long; the pipeline then reads what was produced since and holds
// every record exactly once.
func TestKafkaOutageIsLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a broker for 3 s")
	}
	t.Parallel() // it waits out the outage: no kill or stop whose timing a busy machine moves
	addr, data := freeAddr(t), t.TempDir()
	broker := startDevKafka(t, "--listen", addr, "--data-dir", data, "--topic", "outage_in:2")
	produceIDs(t, addr, "outage_in", 0, 500)
	dir := t.TempDir()
	pipeline, out := filepath.Join(dir, "p.yaml"), filepath.Join(dir, "out")
	writeFile(t, pipeline, kafkaToJSON(addr, "outage_in", out))
	c := startSluice(t, "run", nil, "run", pipeline, "--outage-log-interval", "1s")
	waitCommitted(t, c, out, 500, 20*time.Second)

	if err := broker.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = broker.cmd.Wait()
	c.waitFor(t, "cannot reach Kafka broker "+addr, 10*time.Second)
	time.Sleep(3 * time.Second)
	startDevKafka(t, "--listen", addr, "--data-dir", data)
	c.waitFor(t, "connection to Kafka broker "+addr+" restored after", 20*time.Second)
	produceIDs(t, addr, "outage_in", 500, 1000)
	waitCommitted(t, c, out, 1000, 20*time.Second)
	c.stop(t, syscall.SIGTERM)

	l := c.log()
	if !strings.Contains(l, `"level":"WARN","msg":"still cannot reach Kafka broker `+addr+" after ") {
		t.Errorf("the lasting outage was not logged again after --outage-log-interval 1s:\n%s", l)
	}
	checkJSONIDs(t, out, 1000)
}

// TestKafkaDownAtStart: a run whose broker comes up 3 s after it starts waits for it and reads
// every record; a run whose broker never comes up exits 3 after --startup-timeout, saying what
// it could not reach.
func TestKafkaDownAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a broker for 3 s")
	}
	t.Parallel() // it waits for the broker it starts late
	addr := freeAddr(t)
	dir := t.TempDir()
	pipeline, out := filepath.Join(dir, "p.yaml"), filepath.Join(dir, "out")
	writeFile(t, pipeline, kafkaToJSON(addr, "late_in", out))
	c := startSluice(t, "run", nil, "run", pipeline, "--max-records", "300", "--startup-timeout", "20s")
	time.Sleep(3 * time.Second)
	startDevKafka(t, "--listen", addr, "--topic", "late_in:2")
	produceIDs(t, addr, "late_in", 0, 300)
	if err := c.wait(20 * time.Second); err != nil {
		t.Fatalf("the run whose broker came up late: %v\n%s", err, c.log())
	}
	if l := c.log(); !strings.Contains(l, "cannot reach a service that ReadFromKafka needs; trying again for up to 20s") {
		t.Errorf("the run did not say it waits for the broker:\n%s", l)
	}
	checkJSONIDs(t, out, 300)

	never := freeAddr(t)
	writeFile(t, pipeline, kafkaToJSON(never, "late_in", filepath.Join(dir, "out2")))
	start := time.Now()
	c = startSluice(t, "run", nil, "run", pipeline, "--startup-timeout", "2s")
	err := c.wait(20 * time.Second)
	took := time.Since(start)
	if code := exitCode(err); code != exitRuntime || took > 10*time.Second {
		t.Fatalf("with no broker: exit %d after %v, want %d within 10s\n%s", code, took.Round(time.Millisecond), exitRuntime, c.log())
	}
	if l := c.log(); !strings.Contains(l, "connecting to "+never) || !strings.Contains(l, "still unreachable after") || !strings.Contains(l, "in 2s (--startup-timeout)") {
		t.Errorf("the message does not say what was unreachable for how long:\n%s", l)
	}
}

// exitCode is the exit status in err from a process's Wait (0 for nil, -1 if it did not exit).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
