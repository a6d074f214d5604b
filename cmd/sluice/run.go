package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/internal/memlimit"
	"github.com/sluicehq/sluice/internal/outage"
	"github.com/sluicehq/sluice/runner"
)

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	forD := fs.Duration("for", 0, "stop gracefully after this long (e.g. 30s)")
	maxRecords := fs.Int64("max-records", 0, "stop gracefully after about this many records")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "", "json or text (default: text on a terminal, JSON otherwise)")
	httpAddr := fs.String("http-addr", "", "serve the web UI (/), /metrics, /healthz and /readyz on HOST:PORT (docs/operations.md)")
	fs.StringVar(httpAddr, "metrics-addr", "", "the same as --http-addr (its old name)")
	withPprof := fs.Bool("pprof", false, "also serve Go's profiler under /debug/pprof/ on --http-addr")
	stopAtEnd := fs.Bool("stop-at-end", false, "stop once the records that exist at start are read and committed")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the run to this file")
	instance := fs.String("instance", os.Getenv("SLUICE_INSTANCE"), "this copy's name when several copies of the pipeline share a consumer group (default $SLUICE_INSTANCE, else the host name)")
	allowReset := fs.Bool("allow-reset-state", false, "start even if the spec changed incompatibly since the checkpoints were written: sources resume where they still match, window state that no longer fits is dropped (docs/upgrades.md)")
	outageEvery := fs.Duration("outage-log-interval", outage.DefaultRepeat, "how often a lost connection to Kafka, a schema registry or a catalog is logged again while it lasts")
	startupTimeout := fs.Duration("startup-timeout", 60*time.Second, "how long to keep trying at start to reach Kafka, a schema registry or a catalog that is not up yet, before exiting 3 (0: exit at once)")
	progressEvery := fs.Duration("progress-interval", 30*time.Second, "log a progress line (rates, lag, the last commit) this often; on a terminal with text logs a live display instead; 0: neither (docs/operations.md)")
	bqIntent := fs.String("bigquery-intent", "", "settle an old interrupted BigQuery commit whose streams BigQuery no longer knows: assume-committed or assume-lost (see docs/bigquery.md)")
	tf := addTemplateFlags(fs)
	tf.addPipelineFlags()
	pos, ok := parse(fs, args, stderr)
	if ok {
		pos, ok = tf.pipelineArgs(pos, stderr)
	}
	if !ok {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: sluice run PIPELINE.yaml [--for DURATION] [--max-records N]")
		return exitUsage
	}
	switch v := component.CommitVerdict(*bqIntent); v {
	case "", component.AssumeCommitted, component.AssumeLost:
	default:
		fmt.Fprintf(stderr, "sluice run: --bigquery-intent %q: write assume-committed or assume-lost\n", *bqIntent)
		return exitUsage
	}
	if *outageEvery <= 0 {
		fmt.Fprintf(stderr, "sluice run: --outage-log-interval %v: must be longer than zero\n", *outageEvery)
		return exitUsage
	}
	if *progressEvery < 0 {
		fmt.Fprintf(stderr, "sluice run: --progress-interval %v: must not be negative\n", *progressEvery)
		return exitUsage
	}
	outage.SetRepeat(*outageEvery)
	// On a terminal with text logs, progress is a live display that the log lines pass above.
	var live *liveTerm
	logTo := stderr
	if *progressEvery > 0 && isTerminal(stderr) && *logFormat != "json" {
		live = &liveTerm{w: stderr}
		logTo = live
	}
	log, jsonLogs, err := newLogger(logTo, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintf(stderr, "sluice: %v\n", err)
		return exitUsage
	}
	// One log stream from here on, before the pipeline loads (building it may log: a schema
	// registry that is down): the run's logger, masking the pipeline's secrets as loading
	// finds them, is slog's default, which the components log to and which Go's log package
	// and the libraries' loggers (internal/logroute) are routed to. What libraries write with
	// log.Print are their warnings.
	log = slog.New(maskHandler{h: log.Handler(), s: &shown})
	slog.SetDefault(log)
	slog.SetLogLoggerLevel(slog.LevelWarn)
	memlimit.Apply(log)
	out := runOutput{stderr: stderr, log: log, json: jsonLogs}
	tf.warn = func(msg string) { log.Warn(msg) }
	tf.opts.Secrets = &shown
	// Signals are caught from here on; one that comes while the pipeline loads stops it as
	// soon as it starts.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	p, err := tf.load(pos[0])
	if err != nil {
		out.fail(err)
		return exitInvalid
	}
	for _, w := range p.Warnings {
		log.Warn(w.Error())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	go func() {
		<-signals
		log.Info("stopping: committing the last epoch (press Ctrl-C again to stop at once)")
		close(stop)
		// Nothing the stop waits for (a broker that does not answer, a component that
		// ignores cancellation) keeps the process alive past the drain timeout and a grace.
		drain := time.Duration(p.Options.DrainTimeout)
		time.AfterFunc(drain+stopGrace, func() {
			out.say(fmt.Sprintf("the graceful stop did not finish within drain_timeout (%v) + %v; exiting. The next run resumes from the last commit", drain, stopGrace))
			os.Exit(exitRuntime)
		})
		<-signals
		cancel()
		time.AfterFunc(stopGrace, func() {
			out.say(fmt.Sprintf("forced stop did not finish within %v; exiting. The next run resumes from the last commit", stopGrace))
			os.Exit(exitRuntime)
		})
	}()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			out.say("--cpuprofile: " + err.Error())
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			out.say("--cpuprofile: " + err.Error())
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	reg, health, recent := prometheus.NewRegistry(), runner.NewHealth(), runner.NewRecent()
	if *httpAddr != "" {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			out.say("--http-addr: " + err.Error())
			return exitUsage
		}
		srv := &http.Server{Handler: httpHandler(p, reg, health, recent, *withPprof), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		base := "http://" + ln.Addr().String()
		log.Info("serving the web UI, metrics and probes", "ui", base+"/", "metrics", base+"/metrics", "liveness", base+"/healthz", "readiness", base+"/readyz")
	}
	progressInterval, showLive := *progressEvery, (func(runner.Progress))(nil)
	if live != nil {
		progressInterval, showLive = 0, live.show
	}
	start := time.Now()
	defer embedded.CloseDirs() // after the run's clients are closed: an embedded:DIR broker's log is left clean
	st, err := runner.Execute(ctx, p, runner.RunConfig{MaxRecords: *maxRecords, For: *forD, Stop: stop, StopAtEnd: *stopAtEnd, Instance: *instance, Log: log, Metrics: reg,
		Version: sluiceVersion(), AllowResetState: *allowReset, StartupTimeout: *startupTimeout,
		UnknownCommit: component.CommitVerdict(*bqIntent), Health: health, Recent: recent, ProgressInterval: progressInterval, Live: showLive})
	if live != nil {
		live.done()
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, runner.ErrDrainTimeout) {
			out.say("stopped before the last epoch was committed; the next run resumes from the last commit and reads the records since then again")
		} else {
			out.fail(err)
		}
		return exitRuntime
	}
	fmt.Fprintf(stdout, "read %d records in %s, committed %d %s", st.Read, time.Since(start).Round(time.Millisecond), st.Epochs, plural(st.Epochs, "epoch"))
	if st.ErrorRows > 0 {
		fmt.Fprintf(stdout, ", %d records to error outputs", st.ErrorRows)
	}
	fmt.Fprintln(stdout)
	for _, s := range st.Sinks {
		fmt.Fprintf(stdout, "  %s: wrote %d rows", s.Name, s.Rows)
		if s.Skipped > 0 {
			fmt.Fprintf(stdout, " (skipped %d already committed)", s.Skipped)
		}
		if s.Summary != "" {
			fmt.Fprintf(stdout, "; %s", s.Summary)
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}

// stopGrace is how long a stop may take past its deadline (drain_timeout, or at once for a
// forced stop) before the process exits regardless: closing the components (leaving a
// consumer group waits up to 5 s for the broker) happens in it.
const stopGrace = 10 * time.Second

// newLogger logs in format (json or text), by default text to a terminal and JSON otherwise;
// it reports whether the logs are JSON.
func newLogger(w io.Writer, level, format string) (*slog.Logger, bool, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, false, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "" {
		format = "json"
		out := w
		if t, ok := w.(*liveTerm); ok {
			out = t.w
		}
		if isTerminal(out) {
			format = "text"
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), true, nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), false, nil
	}
	return nil, false, fmt.Errorf("--log-format %q: write json or text", format)
}

// runOutput is where sluice run says why it ends: with JSON logs as ERROR records, so that
// stderr stays one stream of JSON lines a log collector parses; with text logs as the lines
// of the other commands (report).
type runOutput struct {
	stderr io.Writer
	log    *slog.Logger // masks secrets
	json   bool
}

// fail says err: a config problem per record (FILE:LINE:COL: message), else one.
func (o runOutput) fail(err error) {
	if !o.json {
		report(o.stderr, err)
		return
	}
	var list diag.List
	if errors.As(err, &list) {
		for _, d := range list {
			o.log.Error(d.Error())
		}
		return
	}
	o.log.Error(strings.TrimSpace(err.Error()))
}

// say says msg, a reason to stop that is not an error value.
func (o runOutput) say(msg string) {
	if o.json {
		o.log.Error(msg)
		return
	}
	fmt.Fprintf(o.stderr, "sluice: %s\n", shown.Mask(msg))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
