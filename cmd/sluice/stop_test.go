package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopWithinDrainTimeoutWhenTheBrokerHangs: a copy of a grouped Kafka -> Iceberg pipeline
// gets SIGTERM while its broker is frozen (SIGSTOP), so it can neither commit its group offsets
// nor leave its group. It must exit within drain_timeout plus a few seconds, without a second
// signal, and say that it left without handing its partitions over.
func TestStopWithinDrainTimeoutWhenTheBrokerHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("freezes a broker for about 10 s")
	}
	const drain = 3 * time.Second
	broker := startDevKafka(t, "--topic", "stop_in:4")
	run := fmt.Sprintf("stop_%d", time.Now().UnixNano())
	w := icebergWarehouse{dir: t.TempDir()}
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, idsChain(broker.addr, "stop_in", fmt.Sprintf("        group.id: %s\n        session.timeout.ms: \"6000\"\n", run),
		w.sink("db.events", "0.3"), fmt.Sprintf("  name: %s\n  checkpoint_interval: 300ms\n  drain_timeout: %s\n", run, drain)))
	if err := <-produceSteadily(t, broker.addr, "stop_in", 4000, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c := startSluice(t, "a", nil, "run", pipeline, "--instance", "a")
	c.waitFor(t, "partitions assigned", 20*time.Second)
	time.Sleep(time.Second) // a commit or two
	if err := broker.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer broker.cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := c.wait(60 * time.Second)
	took := time.Since(start)
	t.Logf("SIGTERM with the broker frozen: exited in %v (%v)", took.Round(time.Millisecond), err)
	if limit := drain + 7*time.Second; took > limit {
		t.Fatalf("the copy took %v to stop, more than drain_timeout %v + 7s\n%s", took.Round(time.Millisecond), drain, c.log())
	}
	if l := c.log(); !strings.Contains(l, "without handing its partitions over") {
		t.Errorf("the copy did not say it left its group without handing over:\n%s", l)
	}
}
