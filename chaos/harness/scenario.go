package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// scenario is one sink and delivery of a run, with a broker of its own.
type scenario struct {
	spec                       scenarioSpec
	cfg                        Config
	bin, dir, logDir, pipeline string
	broker                     *broker
	bq                         *bigQuery
	copies                     []*pipelineCopy
	start                      time.Time

	mu    sync.Mutex
	res   Result
	notes []string       // in order, each once
	seen  map[string]int // how often each note came
}

func (sc *scenario) logf(format string, args ...any) {
	if sc.cfg.Log != nil {
		fmt.Fprintf(sc.cfg.Log, "%6.1fs %-22s %s\n", time.Since(sc.start).Seconds(), sc.spec.name(), fmt.Sprintf(format, args...))
	}
}

// count changes the result under the lock.
func (sc *scenario) count(f func(*Result)) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	f(&sc.res)
}

// fail records an error that fails the scenario.
func (sc *scenario) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sc.logf("ERROR %s", msg)
	sc.count(func(r *Result) { r.Errors = append(r.Errors, msg) })
}

// note records something worth knowing that does not fail the scenario; the same note
// again is counted.
func (sc *scenario) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sc.logf("%s", msg)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.seen[msg] == 0 {
		sc.notes = append(sc.notes, msg)
	}
	sc.seen[msg]++
}

// noteExit counts a copy's own exit, noting its last line.
func (sc *scenario) noteExit(name string, p *proc) {
	sc.count(func(r *Result) { r.Exits++ })
	sc.note("a copy exited by itself (%v) and was run again; its last line: %s", p.err, lastLine(p.logPath))
}

// runScenario runs one scenario in dir and returns what it saw.
func runScenario(ctx context.Context, cfg Config, spec scenarioSpec, bin, dir string, bq *bigQuery) *Result {
	sc := &scenario{spec: spec, cfg: cfg, bin: bin, dir: dir, logDir: filepath.Join(dir, "logs"), bq: bq,
		pipeline: filepath.Join(dir, "pipeline.yaml"), start: time.Now(), seen: map[string]int{}}
	sc.res = Result{Sink: spec.sink, Delivery: spec.delivery, Copies: spec.copies, Dir: dir}
	if err := sc.run(ctx); err != nil {
		sc.fail("%v", err)
	}
	sc.killAll()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, n := range sc.notes {
		if c := sc.seen[n]; c > 1 {
			n = fmt.Sprintf("%d times: %s", c, n)
		}
		sc.res.Notes = append(sc.res.Notes, n)
	}
	return &sc.res
}

func (sc *scenario) run(ctx context.Context) error {
	if err := os.MkdirAll(sc.logDir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", sc.spec.name(), err)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	sc.broker = &broker{bin: sc.bin, addr: addr, dataDir: filepath.Join(sc.dir, "broker"), logDir: sc.logDir,
		onExit: func(p *proc) {
			sc.fail("the broker exited by itself (%v): %s; starting it again", p.err, lastLines(p.logPath, 3))
			if err := sc.broker.start(inputTopic, sc.cfg.Partitions); err != nil {
				sc.fail("%v", err)
			}
		}}
	if err := sc.broker.start(inputTopic, sc.cfg.Partitions); err != nil {
		return err
	}
	defer sc.broker.stop()
	if err := os.WriteFile(sc.pipeline, []byte(sc.pipelineYAML()), 0o644); err != nil {
		return fmt.Errorf("write the pipeline: %w", err)
	}
	prod, err := newProducer(addr, sc.cfg.Rate)
	if err != nil {
		return err
	}
	prodCtx, stopProducing := context.WithTimeout(ctx, sc.cfg.Duration)
	defer stopProducing()
	produced := make(chan error, 1)
	go func() { produced <- prod.run(prodCtx) }()

	for i := range sc.spec.copies {
		c := &pipelineCopy{sc: sc, name: string(rune('a' + i))}
		sc.copies = append(sc.copies, c)
		if err := c.start(); err != nil {
			return err
		}
	}
	sc.logf("started: broker %s, %d copies, producing %d records/s", addr, len(sc.copies), sc.cfg.Rate)

	brokerRate := 0.0
	if sc.spec.brokerRestarts {
		brokerRate = sc.cfg.BrokerRestarts
	}
	var actions sync.WaitGroup
	sc.chaos(prodCtx, schedule(sc.spec.seed, sc.cfg.Duration, sc.cfg.Faults, brokerRate), &actions)
	<-prodCtx.Done()
	actions.Wait()
	if err := <-produced; err != nil {
		sc.fail("%v", err)
	}
	acked, sent, failed, lastErr := prod.ackedIDs()
	sc.res.Produced, sc.res.ProduceFailed = len(acked), failed
	if failed > 0 {
		sc.note("%d of %d records could not be produced, the last with: %v", failed, sent, lastErr)
	}
	sc.logf("producer stopped: %d records acknowledged; draining", len(acked))
	sc.drain(ctx)
	sc.countHandOvers()
	return sc.read(ctx, acked)
}

// chaos carries out the schedule until ctx ends; each action runs on its own, so that faults
// can overlap (a copy down while another is stopped, or the broker is).
func (sc *scenario) chaos(ctx context.Context, plan []action, actions *sync.WaitGroup) {
	var brokerBusy sync.Mutex
	for _, a := range plan {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(sc.start.Add(a.at))):
		}
		if a.kind == faultBroker {
			if !brokerBusy.TryLock() {
				continue
			}
			actions.Add(1)
			go func() {
				defer actions.Done()
				defer brokerBusy.Unlock()
				sc.restartBroker(a.pause)
			}()
			continue
		}
		var c *pipelineCopy
		var p *proc
		for i := range sc.copies { // the picked copy, or the next one that is running
			cand := sc.copies[(int(a.pick%uint64(len(sc.copies)))+i)%len(sc.copies)]
			if cp, ok := cand.take(); ok {
				c, p = cand, cp
				break
			}
		}
		if c == nil {
			sc.logf("no copy running for a %v: skipped", a.kind)
			continue
		}
		actions.Add(1)
		go func() {
			defer actions.Done()
			c.fault(a, p)
		}()
	}
}

// restartBroker SIGKILLs the broker and starts it again on the same address and data.
func (sc *scenario) restartBroker(pause time.Duration) {
	sc.logf("SIGKILL the broker, back in %v", pause.Round(time.Millisecond))
	sc.broker.end().kill()
	sc.count(func(r *Result) { r.BrokerRestarts++ })
	time.Sleep(pause)
	if err := sc.broker.start(inputTopic, sc.cfg.Partitions); err != nil {
		sc.fail("%v", err)
	}
}

// drain waits for the copies to commit everything produced (`sluice status`: lag 0), stops
// them with SIGTERM, and, when they did not catch up, runs one copy with --stop-at-end.
func (sc *scenario) drain(ctx context.Context) {
	start := time.Now()
	caughtUp := false
	// The windows scenario's sink commits no offsets of the input (its results come from the
	// repartition topic), so its lag is unknown: its final --stop-at-end run fires every
	// window instead.
	windows := sc.spec.sink == SinkWindows
	for !windows && time.Since(start) < sc.cfg.DrainTimeout && ctx.Err() == nil {
		if lag, err := sc.lag(ctx); err == nil && lag == 0 {
			caughtUp = true
			break
		}
		time.Sleep(2 * time.Second)
	}
	caught := time.Since(start)
	var stops sync.WaitGroup
	for _, c := range sc.copies {
		stops.Add(1)
		go func() {
			defer stops.Done()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if p, ok := c.take(); ok {
					c.term(p)
					return
				}
			}
			sc.fail("copy %s could not be stopped at the end: it was never running for 30s", c.name)
		}()
	}
	stops.Wait()
	if caughtUp {
		sc.res.Drain = fmt.Sprintf("lag 0 %v after the producer stopped, copies running", caught.Round(time.Second))
		return
	}
	sc.res.FinalLag = -1
	lag, err := sc.lag(ctx)
	switch {
	case windows:
	case err != nil:
		sc.note("the copies had not caught up %v after the producer stopped (%v); a final copy runs with --stop-at-end", caught.Round(time.Second), err)
	default:
		sc.note("the copies had not caught up %v after the producer stopped (lag %d); a final copy runs with --stop-at-end", caught.Round(time.Second), lag)
	}
	// A stopped copy that could not leave the group (the broker held its leave) stays a member
	// until its session expires; a final copy that joined before then would be given only its
	// share of the partitions, read that share to its end and stop, leaving the rest unread.
	// The windows scenario's final copy must get every partition of both groups, or it ends
	// its share and fires windows without the rest: it waits longer for stale members.
	wait := 2 * sessionTimer
	if windows {
		wait = 10 * sessionTimer
	}
	if sc.spec.grouped() {
		sc.waitGroupEmpty(ctx, sc.group(), wait)
	}
	if windows {
		sc.waitGroupEmpty(ctx, sc.group()+"-repartition", wait)
	}
	rctx, cancel := context.WithTimeout(ctx, sc.cfg.DrainTimeout+time.Minute)
	defer cancel()
	out, err := exec.CommandContext(rctx, sc.bin, "run", sc.pipeline, "--stop-at-end", "--instance", "a").CombinedOutput()
	_ = os.WriteFile(filepath.Join(sc.logDir, "final.log"), out, 0o644)
	if err != nil {
		sc.fail("the final --stop-at-end run: %v: %s", err, lastLine(filepath.Join(sc.logDir, "final.log")))
	}
	if windows {
		if err == nil {
			sc.res.FinalLag = 0
		}
		sc.res.Drain = "a final --stop-at-end run, which fires every window"
		return
	}
	if lag, err = sc.lag(ctx); err == nil {
		sc.res.FinalLag = lag
		sc.res.Drain = fmt.Sprintf("a final --stop-at-end run, then lag %d", lag)
	} else {
		sc.res.Drain = fmt.Sprintf("a final --stop-at-end run, then no lag known: %v", err)
	}
}

// waitGroupEmpty waits until a consumer group of the copies has no member, at most wait.
func (sc *scenario) waitGroupEmpty(ctx context.Context, group string, wait time.Duration) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(sc.broker.addr))
	if err != nil {
		sc.note("the group's members could not be listed: %v", err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for deadline := time.Now().Add(wait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
		groups, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			continue
		}
		if g, ok := groups[group]; ok && g.Err == nil && len(g.Members) == 0 {
			return
		}
	}
	sc.note("the consumer group %s still had members %v after the copies stopped", group, wait)
}

// lag asks `sluice status --json` how far the sink's commits are behind the input's ends.
func (sc *scenario) lag(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, sc.bin, "status", "--json", sc.pipeline).Output()
	var st struct {
		Sinks []struct {
			Committed bool   `json:"committed"`
			Lag       *int64 `json:"lag"`
			Error     string `json:"error"`
		} `json:"sinks"`
	}
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	switch {
	case err != nil:
		return -1, fmt.Errorf("sluice status: %w", err)
	case len(st.Sinks) != 1 || st.Sinks[0].Error != "" || !st.Sinks[0].Committed || st.Sinks[0].Lag == nil:
		return -1, fmt.Errorf("sluice status: %s", strings.TrimSpace(string(out)))
	}
	return *st.Sinks[0].Lag, nil
}

// countHandOvers counts the copies' "partitions handed over" and "partitions assigned" lines.
func (sc *scenario) countHandOvers() {
	logs, _ := filepath.Glob(filepath.Join(sc.logDir, "[a-z]-*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		sc.res.HandedOver += strings.Count(string(b), "partitions handed over")
		sc.res.Assigned += strings.Count(string(b), "partitions assigned")
	}
}

// read counts the input topic and the sink's rows with the independent readers.
func (sc *scenario) read(ctx context.Context, acked []int64) error {
	in, err := readTopic(ctx, sc.broker.addr, inputTopic, false, false)
	if err != nil {
		return err
	}
	for _, id := range acked {
		if in.ids[id] == 0 {
			sc.res.InputLost++
		}
	}
	if sc.spec.sink == SinkWindows {
		return sc.readWindows(ctx)
	}
	var out *idCounts
	switch sc.spec.sink {
	case SinkKafka:
		out, err = readTopic(ctx, sc.broker.addr, outputTopic, true, true)
		if err == nil {
			kc, skipped, kerr := readKcat(ctx, sc.broker.addr, outputTopic)
			switch {
			case kerr != nil:
				sc.fail("%v", kerr)
			case skipped != "":
				sc.note("kcat not run: %s", skipped)
			default:
				c := tally(in, kc)
				sc.res.Kcat = &c
				if c != tally(in, out) {
					sc.fail("kcat and franz-go disagree on the output: kcat %+v", c)
				}
			}
		}
	case SinkIceberg:
		out, err = readIceberg(ctx, sc.icebergCatalog(), sc.icebergWarehouse(), icebergTable)
	case SinkBigQuery:
		out, err = readBigQuery(ctx, sc.bq, sc.bqTable())
	case SinkFiles:
		out, err = readFiles(sc.filesDir())
	}
	if err != nil {
		return err
	}
	sc.res.Count = tally(in, out)
	if sc.res.Duplicates > 0 || sc.res.Missing > 0 {
		sc.note("rows too many (+) and too few (-) by input partition: %s", byPartition(in, out))
	}
	if out.bad > 0 {
		sc.fail("%d rows are not what the pipeline writes, the first: %s", out.bad, out.firstBad)
	}
	if in.bad > 0 {
		sc.fail("%d input records are not the producer's, the first: %s", in.bad, in.firstBad)
	}
	sc.logf("counted: %+v", sc.res.Count)
	return nil
}

// killAll SIGKILLs what is left of the scenario's copies (after an error, or when the run
// is interrupted), so that no process outlives the run.
func (sc *scenario) killAll() {
	for _, c := range sc.copies {
		c.close()
	}
}
