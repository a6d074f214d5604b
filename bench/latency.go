package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"
)

// latencyMode is a delivery setting of the kafka-kafka latency runs.
type latencyMode struct {
	name      string
	delivery  string
	async     bool // options.async_progress_tracking
	committed bool // the output's consumer reads read_committed
}

var latencyModes = []latencyMode{
	{name: "exactly_once", delivery: "exactly_once", committed: true},
	{name: "at_least_once", delivery: "at_least_once"},
	{name: "at_least_once+async", delivery: "at_least_once", async: true},
}

// latencyResult is one latency run: a paced producer into Kafka -> MapToFields -> Kafka.
type latencyResult struct {
	Produced int     `json:"produced"`
	Achieved float64 `json:"achieved_per_s"`
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	CPU      float64 `json:"cpu_s"`
	RSSMB    float64 `json:"peak_rss_mb"`
	Check    string  `json:"check"`
	// Epochs is the runner's per-epoch trace (its debug "epoch committed" lines) of the
	// measured part of the run: per phase, the p50 and p99 over the epochs in ms.
	Epochs     int                   `json:"epochs"`
	EpochTrace map[string][2]float64 `json:"epoch_trace,omitempty"`
	// Machine is how busy the machine was from the first paced record until every record
	// came out, and what the broker and the harness used of it.
	Machine machineLoad `json:"machine"`
}

// tracePhases are the phases of the runner's epoch trace (runner/epochtrace.go) and "took",
// from the barrier request to the end of the commit.
var tracePhases = []string{"wait", "cut", "align", "flush", "commit", "ack", "took"}

// epochTrace returns the p50 and p99 of every phase over the "epoch committed" lines of
// stderr, and how many epochs there were. A binary without the
// trace gives "took" only.
func epochTrace(stderr []byte) (int, map[string][2]float64) {
	phases := map[string][]float64{}
	n := 0
	for line := range bytes.Lines(stderr) {
		var l map[string]any
		if json.Unmarshal(line, &l) != nil || l["msg"] != "epoch committed" {
			continue
		}
		n++
		for _, ph := range tracePhases {
			switch v := l[ph+"_ms"].(type) {
			case float64:
				phases[ph] = append(phases[ph], v)
			}
		}
		if took, ok := l["took"].(string); ok {
			if d, err := time.ParseDuration(took); err == nil {
				phases["took"] = append(phases["took"], float64(d)/float64(time.Millisecond))
			}
		}
	}
	out := map[string][2]float64{}
	for ph, v := range phases {
		slices.Sort(v)
		out[ph] = [2]float64{percentile(v, 50), percentile(v, 99)}
	}
	return n, out
}

// warmID is the first id of the records that wait for the pipeline to be up; they are not
// measured.
const warmID = 1 << 40

// latencyWatcher reads the output topic and records, for every measured id the first time
// it is seen, the time from its eventTimestamp (set by the producer) to now.
type latencyWatcher struct {
	mu      sync.Mutex
	seen    map[int64]bool
	lat     []float64 // ms
	records int       // measured records read, duplicates included
	warm    bool
}

func (w *latencyWatcher) watch(ctx context.Context, cl *kgo.Client) {
	var p fastjson.Parser
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		now := time.Now().UnixMicro()
		w.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			v, err := p.ParseBytes(r.Value)
			if err != nil {
				return
			}
			id := v.GetInt64("id")
			if id >= warmID {
				w.warm = true
				return
			}
			w.records++
			if !w.seen[id] {
				w.seen[id] = true
				w.lat = append(w.lat, float64(now-v.GetInt64("eventTimestamp"))/1000)
			}
		})
		w.mu.Unlock()
	}
}

func (w *latencyWatcher) state() (warm bool, distinct int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.warm, len(w.seen)
}

// runLatency runs the kafka-kafka pipeline of mode as a process of its own (the binary bin,
// named label in profiles), produces into it
// at rate records per second for d, and measures when each record reaches the output.
func (e *env) runLatency(ctx context.Context, mode latencyMode, label, bin string, rate int, d, epoch time.Duration, run int) (latencyResult, error) {
	var res latencyResult
	id := fmt.Sprintf("%d-%d-%d", rate, run, time.Now().UnixNano())
	in, out := "lat-in-"+id, "lat-out-"+id
	for _, t := range []string{in, out} {
		if err := createTopic(ctx, e.addr, t, 8); err != nil {
			return res, err
		}
	}
	defer func() {
		if err := deleteTopics(context.WithoutCancel(ctx), e.addr, in, out); err != nil {
			progress("%v", err)
		}
	}()
	dir := filepath.Join(e.dir, "latency-"+id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("%w", err)
	}
	yaml := "pipeline:\n  type: chain\n" + kafkaSource(e.addr, in) + kafkaSink(e.addr, out) +
		fmt.Sprintf("options:\n  name: lat_%d_%d\n  delivery: %s\n  checkpoint_interval: %s\n", run, time.Now().UnixNano(), mode.delivery, epoch)
	if mode.async {
		yaml += "  async_progress_tracking: true\n"
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		return res, fmt.Errorf("writing the pipeline: %w", err)
	}

	opts := []kgo.Opt{kgo.SeedBrokers(e.addr), kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100 * time.Millisecond)}
	if mode.committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	consumer, err := kgo.NewClient(opts...)
	if err != nil {
		return res, fmt.Errorf("consumer: %w", err)
	}
	defer consumer.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ProducerLinger(0))
	if err != nil {
		return res, fmt.Errorf("producer: %w", err)
	}
	defer producer.Close()
	w := &latencyWatcher{seen: map[int64]bool{}}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); w.watch(wctx, consumer) }()
	defer func() { stopWatch(); <-watched }()

	var stderr lockedBuffer
	args := []string{"run", path, "--log-level", "debug"}
	if e.profiles != "" {
		args = append(args, "--cpuprofile", filepath.Join(e.profiles, fmt.Sprintf("latency-%s-%d-%d.prof", label, rate, run)))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting sluice: %w", err)
	}
	stopRSS := rssWatch(cmd.Process.Pid)
	exited := make(chan error, 1)
	var rss float64 // written before exited receives
	go func() { err := cmd.Wait(); rss = stopRSS().hwm; exited <- err }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// Warm up: one record every 200 ms until the first comes out.
	for k := int64(0); ; k++ {
		if warm, _ := w.state(); warm {
			break
		}
		if k == 300 {
			return res, fmt.Errorf("no record came through in 60 s\n%s", tail(stderr.Bytes()))
		}
		select {
		case err := <-exited:
			stopped = true
			return res, fmt.Errorf("sluice exited while warming up: %w\n%s", err, tail(stderr.Bytes()))
		default:
		}
		g := benchdata.NewGenerator(uint64(k))
		producer.Produce(ctx, &kgo.Record{Topic: in, Value: g.Event(nil, warmID+k, time.Now().UnixMicro())}, nil)
		time.Sleep(200 * time.Millisecond)
	}

	start, before := time.Now(), sampleMachine(e.brokerPid)
	measured := stderr.Len() // the epochs of the warm-up are not traced
	n, err := paced(ctx, producer, in, 0, rate, d)
	if err != nil {
		return res, err
	}
	res.Produced = n
	res.Achieved = float64(n) / time.Since(start).Seconds()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, distinct := w.state(); distinct >= n {
			break
		}
	}
	res.Machine = sampleMachine(e.brokerPid).since(before)
	time.Sleep(epoch + 200*time.Millisecond) // duplicates, if any, come out too
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		return res, fmt.Errorf("stopping sluice: %w", err)
	}
	stopped = true
	if err := <-exited; err != nil {
		return res, fmt.Errorf("sluice: %w\n%s", err, tail(stderr.Bytes()))
	}
	res.CPU, res.RSSMB = cpuTime(cmd.ProcessState), rss
	res.Epochs, res.EpochTrace = epochTrace(stderr.Bytes()[measured:]) // the process has exited

	stopWatch()
	<-watched
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.seen) != n:
		res.Check = fmt.Sprintf("%d of %d records came out", len(w.seen), n)
	case mode.committed && w.records != n:
		res.Check = fmt.Sprintf("%d records for %d ids: duplicates", w.records, n)
	}
	slices.Sort(w.lat)
	if len(w.lat) > 0 { // JSON has no NaN
		res.P50, res.P95, res.P99 = percentile(w.lat, 50), percentile(w.lat, 95), percentile(w.lat, 99)
		res.Max = w.lat[len(w.lat)-1]
	}
	return res, nil
}

// lockedBuffer is a bytes.Buffer that a process writes while the harness reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// Bytes returns a copy of what was written so far.
func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
