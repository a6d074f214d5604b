package acceptance

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopDrain is the drain_timeout of the stop tests.
const stopDrain = 3 * time.Second

// groupedStopPipeline starts a broker with topic in 4 partitions holding 4000 records, and
// returns it with a grouped ReadFromKafka -> WriteToIceberg pipeline reading them with
// drain_timeout stopDrain and the given session timeout.
func groupedStopPipeline(t *testing.T, topic string, session time.Duration) (*devBroker, string) {
	t.Helper()
	broker := startDevKafka(t, "--topic", topic+":4")
	run := fmt.Sprintf("%s_%d", topic, time.Now().UnixNano())
	w := icebergWarehouse{dir: t.TempDir()}
	pipeline := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, pipeline, idsChain(broker.addr, topic, fmt.Sprintf("        group.id: %s\n        session.timeout.ms: \"%d\"\n", run, session.Milliseconds()),
		w.sink("db.events", "0.3"), fmt.Sprintf("  name: %s\n  checkpoint_interval: 300ms\n  drain_timeout: %s\n", run, stopDrain)))
	if err := <-produceSteadily(t, broker.addr, topic, 4000, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return broker, pipeline
}

// stopInTime sends SIGTERM to c and checks that it exits within drain_timeout plus a few
// seconds, saying that it left its group without handing its partitions over.
func stopInTime(t *testing.T, c *runningCopy) {
	t.Helper()
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := c.wait(60 * time.Second)
	took := time.Since(start)
	t.Logf("SIGTERM: copy %s exited in %v (%v)", c.name, took.Round(time.Millisecond), err)
	if limit := stopDrain + 7*time.Second; took > limit {
		t.Fatalf("copy %s took %v to stop, more than drain_timeout %v + 7s\n%s", c.name, took.Round(time.Millisecond), stopDrain, c.log())
	}
	l := c.log()
	i := strings.Index(l, "without handing its partitions over")
	if i < 0 {
		t.Fatalf("copy %s did not say it left its group without handing over:\n%s", c.name, l)
	}
	t.Logf("it said: ...%s", l[i:i+strings.IndexByte(l[i:], '"')])
}

// TestStopWithinDrainTimeoutWhenTheBrokerHangs: a copy of a grouped Kafka -> Iceberg pipeline
// gets SIGTERM while its broker is frozen (SIGSTOP), so it can neither commit its group offsets
// nor leave its group. It must exit within drain_timeout plus a few seconds, without a second
// signal, and say that it left without handing its partitions over.
func TestStopWithinDrainTimeoutWhenTheBrokerHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("freezes a broker for about 10 s")
	}
	broker, pipeline := groupedStopPipeline(t, "stop_in", 6*time.Second)
	c := startSluice(t, "a", nil, "run", pipeline, "--instance", "a")
	c.waitFor(t, "partitions assigned", 20*time.Second)
	time.Sleep(time.Second) // a commit or two
	if err := broker.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer broker.cmd.Process.Signal(syscall.SIGCONT)
	stopInTime(t, c)
}

// TestStopWithinDrainTimeoutDuringARebalance is the kill churn of issue #15: copy b of a
// grouped pipeline is SIGKILLed, copy c joins, and the broker holds the group's rebalance
// until b's session (30 s) expires. Copy a, waiting in that rebalance, gets SIGTERM: it must
// not wait for the rebalance to end, but exit within drain_timeout plus a few seconds.
func TestStopWithinDrainTimeoutDuringARebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three copies for about 10 s")
	}
	_, pipeline := groupedStopPipeline(t, "churn_in", 30*time.Second)
	a := startCopy(t, pipeline, "a")
	a.waitFor(t, "partitions assigned", 20*time.Second)
	b := startCopy(t, pipeline, "b")
	b.waitFor(t, "partitions assigned", 20*time.Second)
	b.stop(t, syscall.SIGKILL)
	// a heard of the rebalance b's join made; it must hear of the one c's join makes.
	seen := strings.Count(a.log(), "REBALANCE_IN_PROGRESS")
	c := startCopy(t, pipeline, "c")
	c.waitFor(t, "joining group", 20*time.Second)
	a.waitForMore(t, "REBALANCE_IN_PROGRESS", seen, 20*time.Second)
	time.Sleep(time.Second)
	stopInTime(t, a)
}
