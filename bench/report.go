package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// results is everything a harness run measured; --json writes it.
type results struct {
	Date    string          `json:"date"`
	Command string          `json:"command"`
	Commit  string          `json:"commit"` // git describe --always --dirty of the tree
	Machine machine         `json:"machine"`
	Config  config          `json:"config"`
	Raw     []series        `json:"raw"`
	Runs    []series        `json:"scenarios"`
	Latency []latencySeries `json:"latency"`
}

type config struct {
	Records        int     `json:"records"`
	InputBytes     int64   `json:"input_bytes"`
	Partitions     int     `json:"partitions"`
	Runs           int     `json:"runs"`
	Trigger        string  `json:"trigger"`
	LatencySeconds float64 `json:"latency_seconds"`
	LatencyEpoch   string  `json:"latency_epoch"`
}

type machine struct {
	CPU      string  `json:"cpu"`
	CPUs     int     `json:"cpus"`
	MemoryGB float64 `json:"memory_gb"`
	LoadAvg  string  `json:"loadavg_at_start"`
}

// series is the runs of one scenario or raw limit.
type series struct {
	Name     string        `json:"name"`
	Raw      string        `json:"raw_limit,omitempty"`
	Google   float64       `json:"google_mb_per_cpu_s,omitempty"`
	NotBuilt string        `json:"not_built,omitempty"`
	Runs     []measurement `json:"runs,omitempty"`
}

type latencySeries struct {
	Mode string          `json:"mode"`
	Rate int             `json:"rate"`
	Runs []latencyResult `json:"runs"`
}

// machineInfo reads the CPU model and count, the memory and the load from /proc.
func machineInfo() machine {
	var m machine
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			switch strings.TrimSpace(k) {
			case "model name":
				m.CPU = strings.TrimSpace(v)
			case "processor":
				m.CPUs++
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGB = math.Round(kb/1024/1024*10) / 10
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return m
}

// percentile is the p-th percentile of sorted xs (nearest rank), NaN when empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// median is the median of xs, NaN when empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is (max - min) / median of xs, in percent.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return (slices.Max(xs) - slices.Min(xs)) / median(xs) * 100
}

func field[T any](runs []T, f func(T) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}

// summary is the medians of a series.
type summary struct {
	cpu, wall, rss, anon, rows, mbPerCPU, spread float64
	commits                                      []float64
	files                                        []int64
	filesPerRun                                  float64
	checks                                       []string
}

func summarize(s series, mb float64) summary {
	var sum summary
	sum.cpu = median(field(s.Runs, func(m measurement) float64 { return m.CPU }))
	sum.wall = median(field(s.Runs, func(m measurement) float64 { return m.Wall }))
	sum.rss = median(field(s.Runs, func(m measurement) float64 { return m.RSSMB }))
	sum.anon = median(field(s.Runs, func(m measurement) float64 { return m.AnonMB }))
	sum.rows = median(field(s.Runs, func(m measurement) float64 { return float64(m.Rows) }))
	sum.mbPerCPU = mb / sum.cpu
	sum.spread = spread(field(s.Runs, func(m measurement) float64 { return mb / m.CPU }))
	sum.filesPerRun = median(field(s.Runs, func(m measurement) float64 { return float64(len(m.Files)) }))
	for _, m := range s.Runs {
		sum.commits = append(sum.commits, m.Commits...)
		sum.files = append(sum.files, m.Files...)
		if m.Check != "" {
			sum.checks = append(sum.checks, m.Check)
		}
	}
	slices.Sort(sum.commits)
	slices.Sort(sum.files)
	return sum
}

func num(f float64, prec int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, f)
}

func check(checks []string) string {
	if len(checks) == 0 {
		return "ok"
	}
	return "**FAIL**: " + strings.Join(slices.Compact(checks), "; ")
}

// report prints the tables (Markdown, so BENCHMARKS.md can hold them as printed) and
// reports whether every check passed.
func report(w io.Writer, r *results) bool {
	ok := true
	mb := float64(r.Config.InputBytes) / 1e6
	fmt.Fprintf(w, "\n%s, sluice at %s\n", r.Date, r.Commit)
	fmt.Fprintf(w, "machine: %s, %d CPUs, %.1f GB; load at start %s\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.MemoryGB, r.Machine.LoadAvg)
	fmt.Fprintf(w, "input: %d records, %.1f MB (%.0f bytes each), %d partitions; trigger %s; %d run(s), medians\n\n",
		r.Config.Records, mb, float64(r.Config.InputBytes)/float64(max(r.Config.Records, 1)), r.Config.Partitions, r.Config.Trigger, r.Config.Runs)

	rawMB := map[string]float64{}
	fmt.Fprintln(w, "| raw limit | wall s | CPU s | MB per CPU-s | spread | rows/s | peak RSS MB | check |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, s := range r.Raw {
		sum := summarize(s, mb)
		rawMB[s.Name] = sum.mbPerCPU
		ok = ok && len(sum.checks) == 0
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %s | %s |\n", s.Name, num(sum.wall, 2), num(sum.cpu, 2), num(sum.mbPerCPU, 1),
			pct(sum.spread), num(sum.rows/sum.wall, 0), num(sum.rss, 0), check(sum.checks))
	}

	fmt.Fprintln(w, "\n| scenario | wall s | CPU s | MB per CPU-s | spread | rows/s | peak RSS MB (anon) | data files per run | file MiB min / median / max | commit p50 / p99 ms | of raw limit | x Google | check |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range r.Runs {
		if s.NotBuilt != "" {
			fmt.Fprintf(w, "| %s | not built yet: %s | | | | | | | | | | | |\n", s.Name, s.NotBuilt)
			continue
		}
		sum := summarize(s, mb)
		ok = ok && len(sum.checks) == 0
		files, sizes := "-", "-"
		if len(sum.files) > 0 {
			files = num(sum.filesPerRun, 0)
			mib := func(p float64) string {
				return num(percentile(field(sum.files, func(n int64) float64 { return float64(n) / (1 << 20) }), p), 2)
			}
			sizes = mib(0) + " / " + mib(50) + " / " + mib(100)
		}
		ofRaw, google := "-", "-"
		if lim, found := rawMB[s.Raw]; found && s.Raw != "" {
			ofRaw = fmt.Sprintf("%s of %s", pct(sum.mbPerCPU/lim*100), s.Raw)
		}
		if s.Google > 0 {
			google = num(sum.mbPerCPU/s.Google, 1) + "x"
		}
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", s.Name, num(sum.wall, 2), num(sum.cpu, 2),
			num(sum.mbPerCPU, 1), pct(sum.spread), num(sum.rows/sum.wall, 0), num(sum.rss, 0)+" ("+num(sum.anon, 0)+")", files, sizes,
			num(percentile(sum.commits, 50), 0), num(percentile(sum.commits, 99), 0), ofRaw, google, check(sum.checks))
	}

	if len(r.Latency) > 0 {
		fmt.Fprintf(w, "\nkafka-kafka latency, %s s per rate, epoch (checkpoint_interval) %s, from the producer's timestamp to a consumer of the output:\n\n",
			num(r.Config.LatencySeconds, 0), r.Config.LatencyEpoch)
		fmt.Fprintln(w, "| delivery | target rec/s | achieved rec/s | p50 ms | p95 ms | p99 ms | max ms | sluice CPU s | peak RSS MB | check |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, l := range r.Latency {
		med := func(f func(latencyResult) float64) float64 { return median(field(l.Runs, f)) }
		var checks []string
		for _, x := range l.Runs {
			if x.Check != "" {
				checks = append(checks, x.Check)
			}
		}
		ok = ok && len(checks) == 0
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", l.Mode, l.Rate,
			num(med(func(x latencyResult) float64 { return x.Achieved }), 0),
			num(med(func(x latencyResult) float64 { return x.P50 }), 1),
			num(med(func(x latencyResult) float64 { return x.P95 }), 1),
			num(med(func(x latencyResult) float64 { return x.P99 }), 1),
			num(med(func(x latencyResult) float64 { return x.Max }), 1),
			num(med(func(x latencyResult) float64 { return x.CPU }), 2),
			num(med(func(x latencyResult) float64 { return x.RSSMB }), 0), check(checks))
	}
	if len(r.Latency) > 0 {
		reportEpochTrace(w, r.Latency)
	}
	return ok
}

// reportEpochTrace writes the runner's epoch trace of the latency runs: per phase, the p50 /
// p99 over the epochs of a run (the median over the runs), and the sluice CPU per record.
func reportEpochTrace(w io.Writer, series []latencySeries) {
	fmt.Fprintf(w, "\nepoch trace of the latency runs (runner/epochtrace.go), ms, p50 / p99 over the epochs; - where the binary has no trace:\n\n")
	fmt.Fprintf(w, "| delivery | rec/s | epochs | %s | sluice CPU us per record | machine busy | broker CPU s | harness CPU s |\n", strings.Join(tracePhases, " | "))
	fmt.Fprintf(w, "|---|---|---|%s---|---|---|---|\n", strings.Repeat("---|", len(tracePhases)))
	for _, l := range series {
		cells := []string{l.Mode, strconv.Itoa(l.Rate), num(median(field(l.Runs, func(x latencyResult) float64 { return float64(x.Epochs) })), 0)}
		for _, ph := range tracePhases {
			p50 := median(field(l.Runs, func(x latencyResult) float64 { return x.phase(ph, 0) }))
			p99 := median(field(l.Runs, func(x latencyResult) float64 { return x.phase(ph, 1) }))
			if math.IsNaN(p50) {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, num(p50, 1)+" / "+num(p99, 1))
		}
		cpu := median(field(l.Runs, func(x latencyResult) float64 { return x.CPU / float64(max(x.Produced, 1)) * 1e6 }))
		busy := median(field(l.Runs, func(x latencyResult) float64 { return x.Machine.Busy }))
		broker := median(field(l.Runs, func(x latencyResult) float64 { return x.Machine.BrokerCPU }))
		harness := median(field(l.Runs, func(x latencyResult) float64 { return x.Machine.HarnessCPU }))
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", strings.Join(cells, " | "), num(cpu, 1), pct(busy*100), num(broker, 2), num(harness, 2))
	}
}

// phase is the p50 (i 0) or p99 (i 1) of a phase of the epoch trace, NaN when not traced.
func (x latencyResult) phase(name string, i int) float64 {
	v, ok := x.EpochTrace[name]
	if !ok {
		return math.NaN()
	}
	return v[i]
}

func pct(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", f)
}
