// Command scale measures what docs/scaling.md "1000 partitions on paper" extrapolates from:
// N copies of an exactly-once Kafka -> MapToFields -> Kafka pipeline in one consumer group
// (real `sluice run --instance` processes) over a `sluice dev kafka` broker with a topic of P
// partitions, while a producer writes at a steady rate. It reports the rebalance time (from a
// copy joining, leaving gracefully with SIGTERM or dying with SIGKILL to the moment every input
// partition has delivered, read_committed in the output, a record produced after the event,
// against the same measure at a moment without an event), the checkpoint topic's records and
// bytes per second, and every copy's RSS and CPU.
//
//	go run ./bench/scale                      # 256 partitions, 8 copies
//	go run ./bench/scale --partitions 64 --copies 4 --rate 1000
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	inTopic         = "scale_in"
	outTopic        = "scale_out"
	checkpointTopic = "__sluice_checkpoints" // connectors/kafka.CheckpointTopic
)

type options struct {
	partitions, copies, rate, pad int
	epoch, settle, session        time.Duration
	sluice, sink                  string
	keep                          bool
}

// The sinks the copies may write.
const (
	sinkKafka   = "kafka"   // WriteToKafka, exactly once
	sinkIceberg = "iceberg" // WriteToIceberg routed by field into 4 tables (iceberg.go)
)

func main() {
	var o options
	flag.IntVar(&o.partitions, "partitions", 256, "partitions of the input topic")
	flag.IntVar(&o.copies, "copies", 8, "copies of the pipeline in the consumer group")
	flag.IntVar(&o.rate, "rate", 2000, "input records per second, over all partitions")
	flag.IntVar(&o.pad, "pad", 200, "bytes of padding per record (the record is about this plus 60 bytes of JSON)")
	flag.DurationVar(&o.epoch, "epoch", time.Second, "checkpoint_interval of the pipeline (one transaction per copy per epoch)")
	flag.DurationVar(&o.settle, "settle", 20*time.Second, "how long the group runs between two events")
	flag.DurationVar(&o.session, "session", 6*time.Second, "session.timeout.ms of the copies (a SIGKILLed copy's partitions wait for it)")
	flag.StringVar(&o.sluice, "sluice", "", "the sluice binary (default: go build ./cmd/sluice)")
	flag.StringVar(&o.sink, "sink", sinkKafka, "the copies' sink: kafka, or iceberg (routed into 4 tables of a local SQL catalog; no stall times)")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch directory (the copies' logs) and print it")
	flag.Parse()
	if o.sink != sinkKafka && o.sink != sinkIceberg {
		fmt.Fprintf(os.Stderr, "scale: --sink %q: want kafka or iceberg\n", o.sink)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "sluice-scale-")
	if err != nil {
		return err
	}
	if o.keep {
		progress("the copies' logs are in %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if o.sluice == "" {
		o.sluice = filepath.Join(dir, "sluice")
		progress("building sluice")
		if out, err := exec.Command("go", "build", "-o", o.sluice, "./cmd/sluice").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %w\n%s", err, out)
		}
	}
	addr, stopBroker, err := startBroker(context.Background(), o.sluice, fmt.Sprintf("%s:%d", inTopic, o.partitions))
	if err != nil {
		return err
	}
	defer stopBroker()
	pipeline := filepath.Join(dir, "scale.yaml")
	if err := os.WriteFile(pipeline, []byte(pipelineYAML(addr, dir, o)), 0o644); err != nil {
		return err
	}
	start := time.Now()
	produceCtx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	produced := make(chan struct{})
	go func() { produce(produceCtx, addr, o, start); close(produced) }()
	var arrivals *arrivals
	if o.sink == sinkKafka {
		arrivals = newArrivals(o.partitions, start)
		go consume(ctx, addr, arrivals)
	}

	g := &group{o: o, pipeline: pipeline, dir: dir}
	defer g.stopAll()
	for i := range o.copies {
		if err := g.start(ctx, fmt.Sprintf("c%d", i)); err != nil {
			return err
		}
	}
	if arrivals != nil {
		progress("%d copies started; waiting for every partition to flow", o.copies)
		first := arrivals.allSince(0, 5*time.Minute)
		if first < 0 {
			return fmt.Errorf("not every partition delivered within 5 minutes of the start")
		}
		fmt.Printf("first assignment: every partition flowing %.1f s after the copies started\n", first.Seconds())
	}
	time.Sleep(o.settle)

	// Steady state: the checkpoint topic's writes (or the tables' commits), RSS and CPU of
	// every copy.
	steadyFrom := time.Now()
	cpu0 := g.cpu()
	time.Sleep(o.settle)
	steadyTo := time.Now()
	cpu1 := g.cpu()
	rss := g.rss()

	if err := runEvents(ctx, o, g, arrivals, start); err != nil {
		return err
	}
	stopProducing()
	<-produced
	secs := steadyTo.Sub(steadyFrom).Seconds()
	inMB := float64(o.rate) * float64(o.pad+60) * secs / 1e6
	fmt.Printf("\nsteady state over %.0f s, %d partitions, %d copies, %d records/s (%.2f MB/s), epoch %s, sink %s:\n",
		secs, o.partitions, o.copies, o.rate, inMB/secs, o.epoch, o.sink)
	if o.sink == sinkKafka {
		records, bytes, keys, err := checkpointWrites(addr, steadyFrom, steadyTo)
		if err != nil {
			return err
		}
		fmt.Printf("checkpoint topic: %.1f records/s, %.0f bytes/s, %.0f bytes per record, %d keys\n",
			float64(records)/secs, float64(bytes)/secs, float64(bytes)/max(float64(records), 1), keys)
	} else {
		commits, tables, err := icebergCommits(ctx, dir, steadyFrom, steadyTo)
		if err != nil {
			return err
		}
		fmt.Printf("iceberg: %.2f commits/s over %d tables (%.2f per table per s)\n", float64(commits)/secs, tables, float64(commits)/secs/float64(max(tables, 1)))
	}
	var rssSum, cpuSum float64
	for _, name := range slices.Sorted(maps.Keys(rss)) {
		rssSum += rss[name]
		cpuSum += cpu1[name] - cpu0[name]
	}
	n := float64(len(rss))
	fmt.Printf("per copy: RSS %.0f MiB (mean of %d), CPU %.3f s per s, %.2f CPU-s per MB of input over all copies\n",
		rssSum/n/1024, len(rss), cpuSum/n/secs, cpuSum/inMB)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average: %s", load)

	// Exactly once: the copies stop, one drains what is left, and the output must hold every
	// input record once.
	g.stopAll()
	// A copy that stopped without leaving the group (a crash, or a leave refused while it
	// stopped) keeps its partitions until its session expires, and a drain that joins before
	// would reach the end of the others only.
	if err := waitGroupEmpty(ctx, addr, o.session+10*time.Second); err != nil {
		return err
	}
	if err := drain(ctx, o, pipeline); err != nil {
		return err
	}
	in, err := readIDs(ctx, addr, inTopic, false)
	if err != nil {
		return err
	}
	var out map[int64]int
	if o.sink == sinkKafka {
		out, err = readIDs(ctx, addr, outTopic, true)
	} else {
		out, err = icebergIDs(ctx, dir)
	}
	if err != nil {
		return err
	}
	missing, dups, foreign := compareIDs(in, out)
	if missing > 0 {
		var some []int64
		for id := range in {
			if out[id] == 0 {
				some = append(some, id)
			}
		}
		slices.Sort(some)
		fmt.Printf("missing ids (first 40; partition = id %% %d): %v\n", o.partitions, some[:min(len(some), 40)])
	}
	fmt.Printf("exactly once: %d input records, %d missing, %d duplicated, %d unknown in the output\n", len(in), missing, dups, foreign)
	if missing+dups+foreign > 0 {
		return fmt.Errorf("the output does not hold every input record exactly once")
	}
	return nil
}

// runEvents makes copies join, leave, die and stall (a zombie), and with a Kafka sink
// reports how long each event stalled the partitions.
func runEvents(ctx context.Context, o options, g *group, arrivals *arrivals, start time.Time) error {
	type event struct {
		name string
		do   func() error
	}
	extra := fmt.Sprintf("c%d", o.copies)
	events := []event{
		{"no event (baseline)", func() error { return nil }},
		{"copy " + extra + " joins", func() error { return g.start(ctx, extra) }},
		{"copy " + extra + " leaves (SIGTERM)", func() error { return g.stop(extra, syscall.SIGTERM) }},
		{"copy " + extra + " joins again", func() error { return g.start(ctx, extra) }},
		{"copy " + extra + " dies (SIGKILL)", func() error { return g.stop(extra, syscall.SIGKILL) }},
		{"copy " + extra + " joins, then stalls past its session", func() error {
			if err := g.start(ctx, extra); err != nil {
				return err
			}
			time.Sleep(o.settle)
			return g.stall(extra, o.session+4*time.Second)
		}},
	}
	fmt.Printf("\n%-44s %14s %12s %s\n", "event", "all flowing", "max latency", "partitions over 2x the baseline's max latency")
	var baseline time.Duration
	for i, e := range events {
		at := time.Since(start)
		if arrivals != nil {
			arrivals.resetMax()
		}
		if err := e.do(); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if arrivals == nil {
			time.Sleep(o.settle)
			fmt.Printf("%-44s %14s\n", e.name, "-")
			continue
		}
		took := arrivals.allSince(at, 2*time.Minute)
		time.Sleep(o.settle)
		worst, lat := arrivals.maxLatency()
		if i == 0 {
			baseline = worst
		}
		slow := 0
		for _, l := range lat {
			if l > 2*baseline {
				slow++
			}
		}
		flowing := "> 2 min"
		if took >= 0 {
			flowing = fmt.Sprintf("%.2f s", took.Seconds())
		}
		fmt.Printf("%-44s %14s %10.2f s %d of %d\n", e.name, flowing, worst.Seconds(), slow, len(lat))
	}
	if z := g.exited(extra); z != "" {
		fmt.Printf("the stalled copy %s: %s\n", extra, z)
	}
	return nil
}

func pipelineYAML(addr, dir string, o options) string {
	sink := fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
`, addr, outTopic)
	if o.sink == sinkIceberg {
		sink = icebergSink(dir, o)
	}
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
      consumer_config:
        group.id: scale
        session.timeout.ms: "%d"
      schema:
        type: object
        properties:
          id: {type: integer}
          p: {type: integer}
          ts: {type: integer}
          pad: {type: string}
  transforms:
    - type: MapToFields
      config:
        language: python
        append: true
        fields:
          bucket: "0 if id %% 10 < 6 else 1 if id %% 10 < 9 else 3 if id %% 1000 == 999 else 2"
%soptions:
  name: scale
  checkpoint_interval: %s
`, addr, inTopic, o.session.Milliseconds(), sink, o.epoch)
}

// startBroker starts `sluice dev kafka` with topic (NAME:PARTITIONS) and returns its address.
func startBroker(ctx context.Context, sluice, topic string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, sluice, "dev", "kafka", "--listen", "127.0.0.1:0", "--topic", topic)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting sluice dev kafka: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	sc := bufio.NewScanner(out)
	var addr string
	for addr == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bootstrap_servers: "); ok {
			addr = a
		}
	}
	if addr == "" {
		stop()
		return "", nil, fmt.Errorf("sluice dev kafka printed no address")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return addr, stop, nil
}

// produce writes o.rate records per second, round robin over the partitions, each stamped
// with its partition and the time since start.
func produce(ctx context.Context, addr string, o options, start time.Time) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		progress("producer: %v", err)
		return
	}
	defer cl.Close()
	pad := strings.Repeat("x", o.pad)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var id int64
	for {
		select {
		case <-ctx.Done():
			// Every record produced is in the topic before the drain lists its ends.
			fctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cl.Flush(fctx); err != nil {
				progress("producer: flushing: %v", err)
			}
			return
		case <-tick.C:
		}
		due := int64(time.Since(start).Seconds() * float64(o.rate))
		for ; id < due; id++ {
			p := int32(id % int64(o.partitions))
			v := fmt.Sprintf(`{"id":%d,"p":%d,"ts":%d,"pad":%q}`, id, p, time.Since(start).Milliseconds(), pad)
			cl.Produce(context.Background(), &kgo.Record{Topic: inTopic, Partition: p, Value: []byte(v)}, nil)
		}
	}
}

// arrivals records, per input partition, the newest produce time (since start) of the
// records the output delivered so far.
type arrivals struct {
	mu     sync.Mutex
	newest []time.Duration
	// worst is, per partition, the highest latency (delivery minus produce time) since the
	// last resetMax.
	worst []time.Duration
	start time.Time
}

func newArrivals(partitions int, start time.Time) *arrivals {
	a := &arrivals{newest: make([]time.Duration, partitions), worst: make([]time.Duration, partitions), start: start}
	for i := range a.newest {
		a.newest[i] = -1
	}
	return a
}

func (a *arrivals) saw(p int, produced time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p < 0 || p >= len(a.newest) {
		return
	}
	a.newest[p] = max(a.newest[p], produced)
	a.worst[p] = max(a.worst[p], time.Since(a.start)-produced)
}

func (a *arrivals) resetMax() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.worst)
}

// maxLatency returns the highest latency of any partition since resetMax, and each one's.
func (a *arrivals) maxLatency() (time.Duration, []time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Max(a.worst), slices.Clone(a.worst)
}

// allSince waits until every partition delivered a record produced at or after at (since
// start) and returns how long after at that was, or -1 after timeout.
func (a *arrivals) allSince(at, timeout time.Duration) time.Duration {
	for time.Since(a.start) < at+timeout {
		if len(a.stalled(at)) == 0 {
			return time.Since(a.start) - at
		}
		time.Sleep(20 * time.Millisecond)
	}
	return -1
}

// stalled returns the partitions that delivered no record produced at or after at.
func (a *arrivals) stalled(at time.Duration) []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []int
	for p, n := range a.newest {
		if n < at {
			out = append(out, p)
		}
	}
	return out
}

// consume reads the output, read_committed, and records the arrivals.
func consume(ctx context.Context, addr string, a *arrivals) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(outTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		progress("consumer: %v", err)
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			var v struct{ P, TS int64 }
			if json.Unmarshal(r.Value, &v) == nil {
				a.saw(int(v.P), time.Duration(v.TS)*time.Millisecond)
			}
		})
	}
}

// readIDs reads topic from its start to its end (read_committed when committed) and counts
// each record's id.
func readIDs(ctx context.Context, addr, topic string, committed bool) (map[int64]int, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ids := map[int64]int{}
	// Everything is committed when this runs: the topic is read once two polls of 3 s in a
	// row bring nothing.
	for idle := 0; idle < 2; {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var v struct{ ID int64 }
			if json.Unmarshal(r.Value, &v) == nil {
				ids[v.ID]++
			}
		})
		if n == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	return ids, nil
}

// compareIDs counts the input's ids missing from the output, the output's duplicates, and the
// output's ids the input lacks.
func compareIDs(in, out map[int64]int) (missing, dups, foreign int) {
	for id := range in {
		switch n := out[id]; {
		case n == 0:
			missing++
		case n > 1:
			dups += n - 1
		}
	}
	for id := range out {
		if in[id] == 0 {
			foreign++
		}
	}
	return missing, dups, foreign
}

// checkpointWrites counts the checkpoint topic's records written in [from, to): how many,
// their bytes (key and value), and the distinct keys.
func checkpointWrites(addr string, from, to time.Time) (records, bytes int64, keys int, err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(checkpointTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, 0, 0, err
	}
	defer cl.Close()
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Timestamp.After(to) {
				done = true
			}
			if r.Timestamp.Before(from) || !r.Timestamp.Before(to) {
				return
			}
			records++
			bytes += int64(len(r.Key) + len(r.Value))
			seen[string(r.Key)] = true
		})
		if done {
			break
		}
	}
	if records == 0 {
		return 0, 0, 0, fmt.Errorf("no checkpoint records between %s and %s", from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	}
	return records, bytes, len(seen), nil
}

// group is the running copies of the pipeline.
type group struct {
	o        options
	pipeline string
	dir      string
	mu       sync.Mutex
	copies   map[string]*exec.Cmd
	exits    map[string]chan error // closed-over exit status of each copy's last run
}

func (g *group) start(ctx context.Context, name string) error {
	log, err := os.OpenFile(filepath.Join(g.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, g.o.sluice, "run", g.pipeline, "--instance", name)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting copy %s: %w", name, err)
	}
	exit := make(chan error, 1)
	go func() { exit <- cmd.Wait(); log.Close() }()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.copies == nil {
		g.copies, g.exits = map[string]*exec.Cmd{}, map[string]chan error{}
	}
	g.copies[name], g.exits[name] = cmd, exit
	return nil
}

func (g *group) stop(name string, sig syscall.Signal) error {
	g.mu.Lock()
	cmd := g.copies[name]
	delete(g.copies, name)
	g.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("no copy %s", name)
	}
	return cmd.Process.Signal(sig)
}

// stall pauses a copy for d (SIGSTOP, SIGCONT): past its session it loses its partitions
// without knowing it, and must stop with an error instead of committing them.
func (g *group) stall(name string, d time.Duration) error {
	g.mu.Lock()
	cmd := g.copies[name]
	g.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("no copy %s", name)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	time.Sleep(d)
	return cmd.Process.Signal(syscall.SIGCONT)
}

// exited says how a copy's last run ended, waiting up to 30 s: its exit status and the last
// line of its log.
func (g *group) exited(name string) string {
	g.mu.Lock()
	exit := g.exits[name]
	g.mu.Unlock()
	select {
	case err := <-exit:
		g.mu.Lock()
		delete(g.copies, name)
		g.mu.Unlock()
		log, _ := os.ReadFile(filepath.Join(g.dir, name+".log"))
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		return fmt.Sprintf("exited (%v): %s", err, lines[len(lines)-1])
	case <-time.After(30 * time.Second):
		return "still running 30 s after it woke: it did not notice it lost its partitions"
	}
}

func (g *group) stopAll() {
	g.mu.Lock()
	names := slices.Collect(maps.Keys(g.copies))
	g.mu.Unlock()
	for _, n := range names {
		_ = g.stop(n, syscall.SIGTERM)
	}
	for _, n := range names {
		select {
		case <-g.exits[n]:
		case <-time.After(time.Minute):
			progress("copy %s did not stop within a minute of SIGTERM", n)
		}
	}
}

// waitGroupEmpty waits until the consumer group has no member.
func waitGroupEmpty(ctx context.Context, addr string, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(timeout)
	for {
		groups, err := adm.DescribeGroups(ctx, "scale")
		if err == nil && len(groups["scale"].Members) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the consumer group still has members %s after every copy stopped (%v)", timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// drain runs one copy to the end of the input (--stop-at-end); its log is drain.log.
func drain(ctx context.Context, o options, pipeline string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	progress("draining the input with one copy")
	out, err := exec.CommandContext(ctx, o.sluice, "run", pipeline, "--stop-at-end", "--instance", "c0").CombinedOutput()
	_ = os.WriteFile(filepath.Join(filepath.Dir(pipeline), "drain.log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("the final drain: %w\n%s", err, out)
	}
	return nil
}

// rss returns every copy's resident set (KiB), from /proc.
func (g *group) rss() map[string]float64 {
	return g.proc(func(pid int) float64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				return n
			}
		}
		return 0
	})
}

// cpu returns every copy's CPU-seconds so far (user and system), from /proc.
func (g *group) cpu() map[string]float64 {
	return g.proc(func(pid int) float64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		k, _ := strconv.ParseFloat(f[12], 64)
		return (u + k) / 100 // USER_HZ
	})
}

func (g *group) proc(read func(pid int) float64) map[string]float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]float64{}
	for name, cmd := range g.copies {
		out[name] = read(cmd.Process.Pid)
	}
	return out
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s scale: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
