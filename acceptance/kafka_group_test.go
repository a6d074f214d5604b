package acceptance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sinkbq "github.com/sluicehq/sluice/connectors/bigquery"
)

// TestKafkaGroupRebalance runs two copies of an exactly-once Kafka -> Kafka pipeline in one
// consumer group while 200k records flow in. Copy b joins after a, leaves gracefully, comes
// back, is SIGKILLed, comes back again, and is finally paused past its session (a zombie);
// each time the group moves partitions between them. At the end one copy drains what is
// left, and a read_committed consumer of the output must see every input record exactly once.
func TestKafkaGroupRebalance(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr, in := groupInput(t, "group_in")
	run := fmt.Sprintf("group_%d", time.Now().UnixNano())
	out := "out_" + run
	sink := fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
`, addr, out)
	groupRebalance(t, addr, in, run, groupPipeline(addr, in, run, "100ms", sink), func() map[int64]int { return countIDs(t, addr, out) })
}

// TestIcebergGroupRebalance is TestKafkaGroupRebalance with both copies writing one Iceberg
// table: the table's compare-and-set on offsets keeps the zombie out.
func TestIcebergGroupRebalance(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr, in := groupInput(t, "group_iceberg_in")
	run := fmt.Sprintf("group_iceberg_%d", time.Now().UnixNano())
	w := icebergWarehouse{dir: t.TempDir()}
	sink := w.sink("db.events", "0.3")
	groupRebalance(t, addr, in, run, groupPipeline(addr, in, run, "300ms", sink), func() map[int64]int { return w.ids(t, "db.events") })
}

// TestBigQueryGroupRebalance is TestKafkaGroupRebalance with both copies writing one BigQuery
// table on the loopback Storage Write API server. Their states are in the Kafka checkpoint
// topic, every save fenced by the copy's generation in the group; a copy given partitions
// settles another copy's interrupted commit before it reads them.
func TestBigQueryGroupRebalance(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr, in := groupInput(t, "group_bigquery_in")
	run := fmt.Sprintf("group_bigquery_%d", time.Now().UnixNano())
	bq := startBigQuery(t)
	sink := bq.sink("events", "", "0.3")
	groupRebalance(t, addr, in, run, groupPipeline(addr, in, run, "300ms", sink), func() map[int64]int { return bq.ids(t, "events") })
}

// TestBigQueryCopySettlesAnothersCommit: copy a of a Kafka -> WriteToBigQuery pipeline is
// SIGKILLed after saving the intent of its first commit and before committing its streams,
// and never comes back; copy b, given a's partitions once a's session expires, finds the
// intent in the checkpoint topic and commits a's finalized streams before it reads on. The
// table must hold every record exactly once.
func TestBigQueryCopySettlesAnothersCommit(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const records = 20_000
	addr, in := groupInput(t, "settle_in")
	run := fmt.Sprintf("settle_%d", time.Now().UnixNano())
	bq := startBigQuery(t)
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, groupPipeline(addr, in, run, "300ms", bq.sink("settle", "", "0.3")))
	if err := <-produceSteadily(t, addr, in, records, time.Second); err != nil {
		t.Fatal(err)
	}
	a := startSluice(t, "a", []string{sinkbq.PauseEnv + "=2s"}, "run", pipeline, "--instance", "a")
	a.waitFor(t, "bigquery-pause intent-saved", time.Minute)
	a.stop(t, syscall.SIGKILL)
	if n := bq.count("settle"); n != 0 {
		t.Fatalf("the table holds %d rows before copy b runs, want none: a was killed before its commit", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "run", pipeline, "--stop-at-end", "--instance", "b").CombinedOutput()
	if err != nil {
		t.Fatalf("copy b: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "settled a BigQuery commit another copy left under way") || !strings.Contains(string(out), `"committed":true`) {
		t.Errorf("copy b did not settle a's commit:\n%s", out)
	}
	dups := checkAllIDs(t, "exactly_once", records, bq.ids(t, "settle"))
	t.Logf("%d records, %d duplicates", records, dups)
}

// groupRecords is how many records the group tests produce.
const groupRecords = 200_000

// groupInput returns the broker and the input topic of a group test: a `sluice dev kafka` of
// its own with the topic in 8 partitions, or SLUICE_TEST_KAFKA and a fresh topic there.
func groupInput(t *testing.T, topic string) (addr, in string) {
	if addr = os.Getenv("SLUICE_TEST_KAFKA"); addr != "" {
		return addr, fmt.Sprintf("%s_%d", topic, time.Now().UnixNano())
	}
	return startDevKafka(t, "--topic", topic+":8").addr, topic
}

// groupPipeline is ReadFromKafka(in, in consumer group name) -> MapToFields -> sink, exactly
// once, epochs every interval.
func groupPipeline(addr, in, name, interval, sink string) string {
	return idsChain(addr, in, fmt.Sprintf("        group.id: %s\n        session.timeout.ms: \"6000\"\n", name), sink,
		fmt.Sprintf("  name: %s\n  checkpoint_interval: %s\n", name, interval))
}

// groupRebalance runs the copies of pipelineText through the rebalances and checks, with
// readBack, that the output holds every input record exactly once.
func groupRebalance(t *testing.T, addr, in, run, pipelineText string, readBack func() map[int64]int) {
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, pipelineText)
	produced := produceSteadily(t, addr, in, groupRecords, 12*time.Second)
	var bs []*runningCopy // every run of copy b
	startB := func() *runningCopy { bs = append(bs, startCopy(t, pipeline, "b")); return bs[len(bs)-1] }
	a := startCopy(t, pipeline, "a")
	t.Cleanup(func() {
		if t.Failed() { // keep the logs of every run, which are too long for the test's output
			for i, c := range append([]*runningCopy{a}, bs...) {
				path := filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d-%s.log", run, i, c.name))
				if os.WriteFile(path, []byte(c.log()), 0o644) == nil {
					t.Logf("log of copy %s: %s", c.name, path)
				}
			}
		}
	})
	// Each copy runs a second once the group has given it partitions (a loaded machine may take
	// seconds to start a copy and balance the group).
	a.waitFor(t, "partitions assigned", 30*time.Second)
	time.Sleep(time.Second)
	b := startB()
	b.waitFor(t, "partitions assigned", 30*time.Second)
	time.Sleep(time.Second)
	b.stop(t, syscall.SIGTERM) // graceful: b commits and leaves; a takes its partitions
	time.Sleep(2 * time.Second)
	b = startB()
	b.waitFor(t, "partitions assigned", 30*time.Second)
	time.Sleep(time.Second)
	b.stop(t, syscall.SIGKILL) // a crash: the group moves b's partitions after its session expires
	b = startB()
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	// Past the dead member's session the group balances a and b again: b is given partitions.
	b.waitFor(t, "partitions assigned", 30*time.Second)
	// A zombie: b stalls past its session, a takes its partitions over, then b wakes up with
	// an epoch in flight. The group must refuse b's transaction (or b notice it lost them):
	// b stops without committing, and nothing is duplicated.
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := b.wait(30 * time.Second)
	if i := strings.LastIndex(b.log(), "sluice: "); i >= 0 {
		t.Logf("the zombie stopped with: %s", strings.TrimSpace(b.log()[i:]))
	}
	if err == nil {
		t.Errorf("the zombie copy b went on after losing its partitions\n%s", b.log())
	} else if l := b.log(); !strings.Contains(l, "lost its partitions") && !strings.Contains(l, "lost partitions") && !strings.Contains(l, "another copy of the pipeline took the partition") {
		t.Errorf("the zombie copy b failed, but not because it lost its partitions: %v\n%s", err, l)
	}
	a.stop(t, syscall.SIGTERM)
	if !strings.Contains(a.log(), "partitions handed over") {
		t.Errorf("copy a never handed partitions over\n%s", a.log())
	}
	for i, b := range bs {
		if !strings.Contains(b.log(), "partitions assigned") {
			t.Errorf("run %d of copy b was never assigned partitions\n%s", i+1, b.log())
		}
	}
	before := readBack()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	final := exec.CommandContext(ctx, binary, "run", pipeline, "--stop-at-end", "--instance", "a")
	if res, err := final.CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen := readBack()
	want := make([]int64, groupRecords)
	for i := range want {
		want[i] = int64(i)
	}
	dups := checkDelivery(t, "exactly_once", want, seen)
	t.Logf("%d input records, %d committed by the two copies before the final drain, %d output records checked, %d duplicates",
		groupRecords, len(before), len(seen)+dups, dups)
}

// runningCopy is a `sluice` process whose output is kept: one copy of a pipeline in a
// consumer group, or any run a test signals.
type runningCopy struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
}

func (c *runningCopy) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *runningCopy) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// startCopy runs copy name of pipeline, with the Kafka clients' logs.
func startCopy(t *testing.T, pipeline, name string) *runningCopy {
	t.Helper()
	return startSluice(t, name, []string{"SLUICE_KAFKA_CLIENT_LOG=info"}, "run", pipeline, "--instance", name)
}

// startSluice starts `sluice args...` with env added to the environment.
func startSluice(t *testing.T, name string, env []string, args ...string) *runningCopy {
	t.Helper()
	c := &runningCopy{name: name}
	c.cmd = exec.Command(binary, args...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c, c
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	return c
}

// waitFor waits until the process has printed text, at most d.
func (c *runningCopy) waitFor(t *testing.T, text string, d time.Duration) {
	t.Helper()
	c.waitForMore(t, text, 0, d)
}

// waitForMore waits until the process has printed text more than n times, at most d: text
// that it printed again, after the n times of an earlier step.
func (c *runningCopy) waitForMore(t *testing.T, text string, n int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); strings.Count(c.log(), text) <= n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q (again, after %d times) within %v:\n%s", c.name, text, n, d, c.log())
		}
	}
}

// stop sends sig and waits for the process; after SIGTERM it must exit 0.
func (c *runningCopy) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("copy %s stopped by %v in %v", c.name, sig, time.Since(start).Round(time.Millisecond)) }()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := c.wait(60 * time.Second)
	if sig == syscall.SIGTERM && err != nil {
		t.Fatalf("copy %s after SIGTERM: %v\n%s", c.name, err, c.log())
	}
}

// wait waits for the process to exit, at most d, and returns how it ended.
func (c *runningCopy) wait(d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = c.cmd.Process.Kill()
		<-done
		return fmt.Errorf("copy %s did not exit within %v", c.name, d)
	}
}
