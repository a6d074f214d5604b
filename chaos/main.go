// Command chaos runs copies of a pipeline per sink through random faults and counts what the
// sinks hold (issue #15; RELIABILITY.md keeps the last soak):
//
//	go run ./chaos                          # all sinks, both deliveries, 2 minutes each
//	go run ./chaos --sinks kafka,iceberg --copies 3 --duration 5m --seed 7
//	go run ./chaos --soak                   # the long run of RELIABILITY.md
//
// Every scenario (a sink and a delivery) has its own `sluice dev kafka` broker and input
// topic, a producer at --rate records/s with unique ids, and --copies copies of ReadFromKafka
// -> MapToFields -> sink in one consumer group (the files sink: one copy, no group). A seeded
// schedule SIGKILLs, SIGTERMs and SIGSTOPs (past the group session) copies and restarts them,
// and SIGKILLs the broker and restarts it on its data directory. Then the producer stops, the
// copies drain, and an independent reader counts the sink's rows per id. The table is
// Markdown; the exit code is 1 when a record was lost (or duplicated under exactly_once), 2
// for bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sluicehq/sluice/chaos/harness"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	cfg, keep, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "sluice-chaos-")
		if err != nil {
			fmt.Fprintf(stderr, "chaos: %v\n", err)
			return 1
		}
		cfg.Dir = dir
		if !keep {
			defer os.RemoveAll(dir)
		}
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := harness.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	harness.WriteMarkdown(stdout, cfg, results)
	failed := 0
	for _, r := range results {
		if r.Failed() {
			failed++
		}
	}
	if keep || failed > 0 {
		fmt.Fprintf(stderr, "chaos: the brokers' data, the sinks' output and every process's log are in %s\n", cfg.Dir)
		keep = true
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "chaos: %d of %d scenarios lost records, duplicated them under exactly_once, or failed\n", failed, len(results))
		return 1
	}
	return 0
}

// parseFlags reads the command line into a run's config; keep says to leave the work
// directory in place.
func parseFlags(args []string, stderr io.Writer) (harness.Config, bool, bool) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := harness.Defaults()
	sinks := fs.String("sinks", strings.Join(d.Sinks, ","), "the sinks to run, comma-separated: kafka, iceberg, bigquery, files")
	deliveries := fs.String("deliveries", strings.Join(d.Deliveries, ","), "the delivery modes, comma-separated: exactly_once, at_least_once")
	copies := fs.Int("copies", d.Copies, "copies of each grouped pipeline (the files sink always runs one)")
	duration := fs.Duration("duration", d.Duration, "how long each scenario produces and faults happen")
	seed := fs.Uint64("seed", d.Seed, "the seed of the fault schedules")
	rate := fs.Int("rate", d.Rate, "records per second into each scenario's input topic")
	partitions := fs.Int("partitions", d.Partitions, "partitions of the input topic")
	kills := fs.Float64("kills", d.Faults, "copy faults per minute per scenario (SIGKILL, SIGTERM and SIGSTOP past the session, 2:1:1)")
	brokers := fs.Float64("broker-restarts", d.BrokerRestarts, "broker SIGKILL-and-restarts per minute per scenario (of the --broker-sinks)")
	brokerSinks := fs.String("broker-sinks", strings.Join(d.BrokerSinks, ","), "the sinks whose scenarios have broker restarts (\"\": none)")
	parallel := fs.Int("parallel", 0, "scenarios at once (0: all)")
	fs.Bool("soak", false, "the soak of RELIABILITY.md: 15 minutes, 4 faults/min and 2 broker restarts per scenario (flags given after it override it)")
	sluice := fs.String("sluice", "", "the sluice binary (default: go build ./cmd/sluice)")
	dir := fs.String("dir", "", "the work directory (default: a temporary one, removed after a run without failures)")
	keep := fs.Bool("keep", false, "keep the work directory")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	// --soak is a preset: read it first, then let the other flags given change it.
	for _, a := range args {
		if a == "--soak" || a == "-soak" || a == "--soak=true" || a == "-soak=true" {
			s := harness.Soak()
			*duration, *kills, *brokers, *rate = s.Duration, s.Faults, s.BrokerRestarts, s.Rate
			for _, f := range []string{"duration", "kills", "broker-restarts", "rate"} {
				fs.Lookup(f).DefValue = fs.Lookup(f).Value.String()
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return harness.Config{}, false, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chaos: unexpected argument %q\n", fs.Arg(0))
		return harness.Config{}, false, false
	}
	cfg := harness.Config{
		Sluice: *sluice, Dir: *dir, Sinks: list(*sinks), Deliveries: list(*deliveries), Copies: *copies,
		Duration: *duration, Seed: *seed, Rate: *rate, Partitions: *partitions, Faults: *kills,
		BrokerRestarts: *brokers, BrokerSinks: list(*brokerSinks), Parallel: *parallel,
		DrainTimeout: d.DrainTimeout,
	}
	if !*quiet {
		cfg.Log = stderr
	}
	if err := cfg.Check(); err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return harness.Config{}, false, false
	}
	return cfg, *keep, true
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
