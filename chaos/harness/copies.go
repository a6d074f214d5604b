package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// exitInvalid is sluice's exit code for an invalid pipeline.
const exitInvalid = 1

// pipelineCopy is one copy (`--instance name`) of a scenario's pipeline, run again after
// every fault and every exit of its own.
type pipelineCopy struct {
	sc   *scenario
	name string

	mu   sync.Mutex
	p    *proc
	runs int
	// busy: an action or the drain owns the copy; its exits are theirs to handle.
	busy bool
	// closed: the scenario is over; the copy is not run again.
	closed bool
}

// start runs the copy once more; its output goes to logs/<name>-<run>.log.
func (c *pipelineCopy) start() error {
	c.mu.Lock() // held while starting, so that close cannot miss the new run
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.runs++
	log := filepath.Join(c.sc.logDir, fmt.Sprintf("%s-%03d.log", c.name, c.runs))
	p, _, err := startProc(c.sc.bin, log, nil, "", "run", c.sc.pipeline, "--instance", c.name)
	if err != nil {
		return err
	}
	c.p = p
	go c.watch(p)
	return nil
}

// close SIGKILLs the copy if it still runs, and keeps it from running again.
func (c *pipelineCopy) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed, c.busy = true, true
	if c.p != nil {
		c.p.signal(syscall.SIGKILL)
	}
}

// watch restarts the copy when it exits by itself (a crash, an error, a zombie refused), and
// counts that exit with its last log line.
func (c *pipelineCopy) watch(p *proc) {
	<-p.exited
	c.mu.Lock()
	mine := !c.busy && c.p == p
	if mine {
		c.busy = true
	}
	c.mu.Unlock()
	if !mine {
		return
	}
	if p.cmd.ProcessState.ExitCode() == exitInvalid {
		c.sc.fail("copy %s: the pipeline is invalid: %s", c.name, lastLines(p.logPath, 3))
		return // left busy: running it again would fail the same way
	}
	c.sc.noteExit(c.name, p)
	time.Sleep(time.Second)
	if err := c.start(); err != nil {
		c.sc.fail("restart copy %s after it exited: %v", c.name, err)
	}
	c.release()
}

// take makes the copy busy for an action, if it is running and nobody else has it.
func (c *pipelineCopy) take() (*proc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy || c.p == nil {
		return nil, false
	}
	select {
	case <-c.p.exited:
		return nil, false
	default:
	}
	c.busy = true
	return c.p, true
}

func (c *pipelineCopy) release() {
	c.mu.Lock()
	c.busy = false
	c.mu.Unlock()
}

// current returns the copy's current run.
func (c *pipelineCopy) current() *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.p
}

// fault runs a copy fault on c, which the caller has taken: signal, wait, bring it back.
func (c *pipelineCopy) fault(a action, p *proc) {
	defer c.release()
	sc := c.sc
	switch a.kind {
	case faultKill:
		sc.logf("SIGKILL copy %s, back in %v", c.name, a.pause.Round(time.Millisecond))
		p.kill()
		sc.count(func(r *Result) { r.Kills++ })
	case faultTerm:
		sc.logf("SIGTERM copy %s, back in %v", c.name, a.pause.Round(time.Millisecond))
		c.term(p)
		sc.count(func(r *Result) { r.Terms++ })
	case faultStop:
		sc.logf("SIGSTOP copy %s for %v", c.name, a.pause.Round(time.Millisecond))
		p.signal(syscall.SIGSTOP)
		sc.count(func(r *Result) { r.Stops++ })
		time.Sleep(a.pause)
		p.signal(syscall.SIGCONT)
		// A zombie whose partitions moved must stop rather than commit; one that kept them
		// (or is single-writer) goes on.
		if !p.wait(20 * time.Second) {
			return
		}
		sc.count(func(r *Result) { r.ZombieExits++ })
		sc.logf("copy %s exited after SIGCONT: %s", c.name, lastLine(p.logPath))
		a.pause = time.Second
	}
	time.Sleep(a.pause)
	if err := c.start(); err != nil {
		sc.fail("restart copy %s: %v", c.name, err)
	}
}

// copyDrainTimeout is the copies' options.drain_timeout, and stopLimit how long a SIGTERMed copy
// may take by sluice's promise (docs/operations.md, "Stopping": drain_timeout plus 10 s), with
// a few seconds for the process to exit.
const (
	copyDrainTimeout = 20 * time.Second
	stopLimit        = copyDrainTimeout + 15*time.Second
)

// term SIGTERMs the copy and waits for its graceful stop; a copy that takes longer than
// stopLimit is SIGKILLed. It records the stop's duration, and a stop that failed.
func (c *pipelineCopy) term(p *proc) {
	start := time.Now()
	p.signal(syscall.SIGTERM)
	if !p.wait(stopLimit) {
		p.kill()
		c.sc.fail("copy %s did not stop within %v of SIGTERM (drain_timeout %v + 10 s); SIGKILLed", c.name, stopLimit, copyDrainTimeout)
	} else if p.err != nil {
		c.sc.note("copy %s stopped by SIGTERM with %v: %s", c.name, p.err, lastLine(p.logPath))
	}
	d := time.Since(start)
	c.sc.count(func(r *Result) { r.SlowestStop = max(r.SlowestStop, d) })
}

// lastLine is the last line of a log that says something (sluice's last word).
func lastLine(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			return l
		}
	}
	return "(no output)"
}
