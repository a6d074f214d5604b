// Command bench measures sluice on the machine it runs on (issue 7, QUALITY.md "Benchmarks"):
// it builds the sluice binary, starts `sluice dev kafka` as a process of its own (its CPU is
// not counted), loads ~1 KiB GAME_EVENT-like JSON records into an 8-partition topic, and runs
// every scenario as its own `sluice run X.yaml --stop-at-end` process, reporting from that
// process's rusage (wait4): wall and CPU seconds, MB of input per CPU-second, rows/s; its
// peak RSS from /proc (memory.go), data files and commit latency. In the same run it measures the raw limits (a bare
// franz-go consumer; with sluice's JSON decoder; with a Parquet writer) and the end-to-end
// latency of Kafka -> Kafka at fixed input rates. Every scenario checks its sink's rows, and
// the command exits 1 when one does not hold what it should. BENCHMARKS.md holds a full run.
//
//	go run ./bench --quick          # under 3 minutes
//	go run ./bench --json bench/results/$(date +%F).json
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "a short run: 50k records, 1 run, latency at 10k records/s for 10 s")
	records := flag.Int("records", 200_000, "records to load into the topic")
	runs := flag.Int("runs", 3, "runs of every scenario; the medians are reported")
	only := flag.String("scenarios", "", "comma-separated scenarios to run (default: all); also raw and latency")
	jsonOut := flag.String("json", "", "write the results as JSON to this file")
	sluice := flag.String("sluice", "", "the sluice binary (default: go build ./cmd/sluice into a temporary directory)")
	trigger := flag.String("trigger", "2s", "triggering_frequency_seconds of the Iceberg sinks and checkpoint_interval of the others")
	rates := flag.String("rates", "10000,50000", "input rates of the latency runs, records per second")
	latSecs := flag.Duration("latency-seconds", 20*time.Second, "how long each latency run produces")
	latEpoch := flag.Duration("latency-epoch", 100*time.Millisecond, "checkpoint_interval of the latency runs")
	latModes := flag.String("latency-modes", "", "comma-separated delivery modes of the latency runs (default: all): exactly_once, at_least_once, at_least_once+async")
	profiles := flag.String("cpuprofile-dir", "", "write a CPU profile of every scenario run into this directory (NAME-RUN.prof)")
	heapProfiles := flag.String("heapprofile-dir", "", "write the heap profile of every scenario run at its largest heap into this directory (NAME-RUN.heap)")
	base := flag.String("sluice-base", "", "another sluice binary (a baseline) that runs every scenario too, right after the first, as NAME@base")
	rawChildMode := flag.String("raw-child", "", "internal: run one raw limit in this process")
	rawAddr := flag.String("raw-addr", "", "internal: the broker of -raw-child")
	rawDir := flag.String("raw-dir", "", "internal: the scratch directory of -raw-child, or the table it reads")
	rawTopic := flag.String("raw-topic", "", "internal: the topic -raw-child produces to")
	rawProfile := flag.String("raw-cpuprofile", "", "internal: the CPU profile -raw-child writes")
	flag.Parse()
	if *rawChildMode != "" {
		stopProfile, err := startCPUProfile(*rawProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench raw:", err)
			os.Exit(1)
		}
		defer stopProfile()
		if *rawChildMode == rawIcebergKafka {
			err = rawIcebergChild(*rawAddr, *rawDir, *rawTopic)
		} else {
			err = rawChild(*rawChildMode, *rawAddr, *records, *rawDir)
		}
		if err != nil {
			stopProfile()
			fmt.Fprintln(os.Stderr, "bench raw:", err)
			os.Exit(1)
		}
		return
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		for name, v := range map[string]string{"records": "50000", "runs": "1", "rates": "10000", "latency-seconds": "10s"} {
			if !set[name] {
				_ = flag.Set(name, v)
			}
		}
	}
	o := options{records: *records, runs: *runs, trigger: *trigger, latSecs: *latSecs, latEpoch: *latEpoch, sluice: *sluice, profiles: *profiles,
		heapProfiles: *heapProfiles, base: *base}
	for r := range strings.SplitSeq(*rates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: --rates: %q is not a rate\n", r)
			os.Exit(2)
		}
		o.rates = append(o.rates, n)
	}
	for m := range strings.SplitSeq(*latModes, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		i := slices.IndexFunc(latencyModes, func(l latencyMode) bool { return l.name == m })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "bench: --latency-modes: unknown %q\n", m)
			os.Exit(2)
		}
		o.latModes = append(o.latModes, latencyModes[i])
	}
	if o.latModes == nil {
		o.latModes = latencyModes
	}
	if *only != "" {
		o.only = map[string]bool{}
		known := []string{"raw", "latency"}
		for _, s := range scenarios {
			known = append(known, s.name)
		}
		for name := range strings.SplitSeq(*only, ",") {
			name = strings.TrimSpace(name)
			if !slices.Contains(known, name) {
				fmt.Fprintf(os.Stderr, "bench: --scenarios: unknown %q (known: %s)\n", name, strings.Join(known, ", "))
				os.Exit(2)
			}
			o.only[name] = true
		}
		if o.only["iceberg-kafka"] {
			o.only["kafka-iceberg"] = true // it reads the table kafka-iceberg writes
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, o)
	if res != nil {
		res.Command = strings.Join(append([]string{"go run ./bench"}, os.Args[1:]...), " ")
		ok := report(os.Stdout, res)
		if *jsonOut != "" {
			if werr := writeJSON(*jsonOut, res); werr != nil && err == nil {
				err = werr
			}
		}
		if !ok {
			fmt.Fprintln(os.Stderr, "bench: a sink does not hold what it should (see check)")
			os.Exit(1)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	records, runs     int
	trigger, sluice   string
	profiles          string // the directory of --cpuprofile-dir, or ""
	heapProfiles      string // the directory of --heapprofile-dir, or ""
	base              string // --sluice-base, or ""
	rates             []int
	latSecs, latEpoch time.Duration
	latModes          []latencyMode
	only              map[string]bool // nil: all
}

func (o options) wants(name string) bool { return o.only == nil || o.only[name] }

// run measures everything o asks for. It returns what it measured also when it fails.
func run(ctx context.Context, o options) (*results, error) {
	dir, err := os.MkdirTemp("", "sluice-bench")
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	defer os.RemoveAll(dir)
	e := &env{sluice: o.sluice, dir: dir, records: o.records, trigger: o.trigger, profiles: o.profiles, heapProfiles: o.heapProfiles, base: o.base}
	if e.sluice == "" {
		e.sluice = filepath.Join(dir, "sluice-built")
		progress("building sluice")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", e.sluice, "github.com/sluicehq/sluice/cmd/sluice").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/sluice: %w\n%s", err, out)
		}
	}
	if e.sluice, err = install(e.sluice, filepath.Join(dir, "sluice")); err != nil {
		return nil, err
	}
	if e.base != "" {
		if e.base, err = install(e.base, filepath.Join(dir, "sluice-base")); err != nil {
			return nil, err
		}
	}
	stopBroker, err := e.startBroker(ctx)
	if err != nil {
		return nil, err
	}
	defer stopBroker()
	defer func() {
		if e.bq != nil {
			e.bq.stop()
		}
	}()
	progress("loading %d records", o.records)
	if e.inputBytes, err = load(ctx, e.addr, "bench", o.records); err != nil {
		return nil, err
	}
	r := &results{Date: time.Now().UTC().Format(time.RFC3339), Commit: commit(ctx), Machine: machineInfo(), Config: config{Records: o.records,
		InputBytes: e.inputBytes, Partitions: 8, Runs: o.runs, Trigger: o.trigger, LatencySeconds: o.latSecs.Seconds(), LatencyEpoch: o.latEpoch.String()}}
	if o.wants("raw") {
		for _, mode := range rawModes {
			r.Raw = append(r.Raw, series{Name: mode})
		}
		if o.wants("kafka-iceberg") {
			r.Raw = append(r.Raw, series{Name: rawIcebergKafka})
		}
	}
	for _, s := range scenarios {
		if o.wants(s.name) {
			r.Runs = append(r.Runs, series{Name: s.name, Raw: s.raw, Google: s.google, NotBuilt: s.notBuilt})
			if o.base != "" {
				r.Runs = append(r.Runs, series{Name: s.name + baseSuffix, Raw: s.raw, Google: s.google, NotBuilt: s.notBuilt})
			}
		}
	}
	// Rounds: every scenario once per round, so that drift in the machine's load spreads
	// over all of them.
	for round := range o.runs {
		if err := e.runRaws(ctx, r, round, false); err != nil {
			return r, err
		}
		for i := range r.Runs {
			s := scenarioNamed(r.Runs[i].Name)
			if s.notBuilt != "" {
				continue
			}
			label, bin := r.Runs[i].Name, e.sluice
			if strings.HasSuffix(label, baseSuffix) {
				bin = e.base
			}
			progress("round %d: %s", round+1, label)
			m, err := e.runScenario(ctx, s, round, bin, label)
			if err != nil {
				return r, fmt.Errorf("%s, round %d: %w", label, round+1, err)
			}
			r.Runs[i].Runs = append(r.Runs[i].Runs, m)
		}
		if err := e.runRaws(ctx, r, round, true); err != nil {
			return r, err
		}
		if !o.wants("latency") {
			continue
		}
		for _, mode := range o.latModes {
			for _, rate := range o.rates {
				bins := map[string]string{mode.name: e.sluice}
				if o.base != "" { // the baseline right after, in the same round
					bins[mode.name+baseSuffix] = e.base
				}
				for _, name := range []string{mode.name, mode.name + baseSuffix} {
					if bins[name] == "" {
						continue
					}
					progress("round %d: latency %s at %d records/s", round+1, name, rate)
					l, err := e.runLatency(ctx, mode, name, bins[name], rate, o.latSecs, o.latEpoch, round)
					if err != nil {
						return r, fmt.Errorf("latency %s at %d/s: %w", name, rate, err)
					}
					r.addLatency(name, rate, l)
				}
			}
		}
	}
	return r, nil
}

// runRaws measures the raw limits of r once, in round: those that read what the round's
// scenarios wrote (rawIcebergKafka) when after is set, the others when it is not.
func (e *env) runRaws(ctx context.Context, r *results, round int, after bool) error {
	for i := range r.Raw {
		if (r.Raw[i].Name == rawIcebergKafka) != after {
			continue
		}
		progress("round %d: raw %s", round+1, r.Raw[i].Name)
		m, err := e.runRaw(ctx, r.Raw[i].Name, round)
		if err != nil {
			return fmt.Errorf("raw %s: %w", r.Raw[i].Name, err)
		}
		r.Raw[i].Runs = append(r.Raw[i].Runs, m)
	}
	return nil
}

// baseSuffix ends the name of a series run with --sluice-base.
const baseSuffix = "@base"

// scenarioNamed is the scenario of a series name (with or without baseSuffix).
func scenarioNamed(name string) scenario {
	name = strings.TrimSuffix(name, baseSuffix)
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	return scenario{}
}

func (r *results) addLatency(mode string, rate int, l latencyResult) {
	for i := range r.Latency {
		if r.Latency[i].Mode == mode && r.Latency[i].Rate == rate {
			r.Latency[i].Runs = append(r.Latency[i].Runs, l)
			return
		}
	}
	r.Latency = append(r.Latency, latencySeries{Mode: mode, Rate: rate, Runs: []latencyResult{l}})
}

// startBroker starts `sluice dev kafka` with the 8-partition topic bench and returns how to
// stop it.
func (e *env) startBroker(ctx context.Context) (func(), error) {
	broker := exec.CommandContext(ctx, e.sluice, "dev", "kafka", "--listen", "127.0.0.1:0", "--topic", "bench:8")
	out, err := broker.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if err := broker.Start(); err != nil {
		return nil, fmt.Errorf("starting sluice dev kafka: %w", err)
	}
	e.brokerPid = broker.Process.Pid
	stop := func() { _ = broker.Process.Kill(); _ = broker.Wait() }
	sc := bufio.NewScanner(out)
	for e.addr == "" && sc.Scan() {
		if a, found := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bootstrap_servers: "); found {
			e.addr = a
		}
	}
	if e.addr == "" {
		stop()
		return nil, fmt.Errorf("sluice dev kafka printed no address")
	}
	go func() { // keep draining its output
		for sc.Scan() {
		}
	}()
	return stop, nil
}

// commit names the source tree: the commit, "-dirty" when it has changes.
func commit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func writeJSON(path string, r *results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// startCPUProfile writes a CPU profile of this process to path, if given, until stop.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
