package acceptance

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killer runs a pipeline again and again and SIGKILLs each run at a random point.
type killer struct {
	pipeline string
	// minDelay and spread bound the time from a run's start to its kill.
	minDelay, spread time.Duration
	// progress reports how many records the runs have committed so far.
	progress func() int
	// env, when set, is added to each run's environment.
	env []string
	// onKill, when set, is called with the stderr of each killed run.
	onKill func(stderr string)
}

// run kills the pipeline at least kills times, and, since a loaded machine may start the
// process too slowly for short delays to reach a commit, keeps going until some runs
// committed something (up to 3 times as many kills), with longer delays counted from the
// pipeline's start (its "pipeline started" log line) rather than the process's. It returns
// the number of kills, and whether a run finished by itself first.
func (k killer) run(t *testing.T, kills int) (int, bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(kills)))
	spread := k.spread
	n := 0
	for n < kills || (k.progress() == 0 && n < 3*kills) {
		if n >= kills && spread < 4*k.spread {
			// Nothing committed yet: give the runs longer, but not so long that one runs
			// through the whole input (the kills must land while it runs).
			spread *= 2
		}
		cmd := exec.Command(binary, "run", k.pipeline)
		if k.env != nil {
			cmd.Env = append(os.Environ(), k.env...)
		}
		stderr := &runningCopy{name: fmt.Sprintf("run %d", n+1)}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		delay := k.minDelay + time.Duration(rng.Int64N(int64(spread)))
		kill := time.After(delay)
		if n >= kills {
			kill = afterStarted(stderr, delay)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d failed before it was killed: %v\n%s", n+1, err, stderr.log())
			}
			return n, true
		case <-kill:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			n++
			if k.onKill != nil {
				k.onKill(stderr.log())
			}
		}
	}
	if k.progress() == 0 {
		t.Fatalf("after %d kills the killed runs have committed nothing: the kills did not hit a running pipeline", n)
	}
	return n, false
}

// afterStarted yields the time d after the run has logged "pipeline started" (or 30 s after it
// was called, if it never does).
func afterStarted(run *runningCopy, d time.Duration) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(run.log(), "pipeline started") && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		at <- <-time.After(d)
	}()
	return at
}

// checkDelivery compares the ids seen in a sink with the ids that should be there: none may
// be missing, and with exactly_once none may be there twice. It returns the duplicates.
func checkDelivery(t *testing.T, delivery string, want []int64, seen map[int64]int) int {
	t.Helper()
	missing, dups := 0, 0
	for _, id := range want {
		switch n := seen[id]; {
		case n == 0:
			missing++
		case n > 1:
			dups += n - 1
		}
	}
	if missing > 0 {
		t.Errorf("%d records missing", missing)
	}
	if delivery == "exactly_once" && dups > 0 {
		t.Errorf("exactly_once delivered %d duplicates", dups)
	}
	return dups
}

// checkAllIDs checks that seen holds the ids 0..records-1 as delivery promises (checkDelivery)
// and no other id; it returns the duplicates.
func checkAllIDs(t *testing.T, delivery string, records int, seen map[int64]int) int {
	t.Helper()
	want := make([]int64, records)
	for i := range want {
		want[i] = int64(i)
	}
	dups := checkDelivery(t, delivery, want, seen)
	for id := range seen {
		if id < 0 || id >= int64(records) {
			t.Fatalf("the sink holds id %d, which was never produced", id)
		}
	}
	return dups
}
