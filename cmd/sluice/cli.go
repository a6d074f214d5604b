package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/logroute"
)

// Exit codes, as FORMAT.md section 7 specifies.
const (
	exitOK      = 0
	exitInvalid = 1 // invalid pipeline or failed test
	exitUsage   = 2
	exitRuntime = 3
)

type command struct {
	name    string
	args    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
	flags   bool // run parses flags with parse, which prints them for --help
}

func commands() []command {
	return []command{
		{"run", "PIPELINE.yaml|template:NAME|- [params] [--for D] [--max-records N] [--stop-at-end] [--http-addr A] [--pprof] [--log-level L] [--log-format json|text] [--startup-timeout D] [--outage-log-interval D] [--cpuprofile F]", "run a pipeline", runCmd, true},
		{"validate", "[--check-services] PIPELINE.yaml... [params]", "check pipelines without I/O; every problem as FILE:LINE:COL: message", validateCmd, true},
		{"render", "PIPELINE.yaml [params]", "print the pipeline after templating, secrets masked", renderCmd, true},
		{"test", "PIPELINE.yaml... [--suite TESTS.yaml] [params]", "run the pipelines' tests: (Beam YAML's mock_outputs, expected_inputs); exit 1 on a failure", testCmd, true},
		{"templates", "list | describe NAME", "the built-in templates and their parameters", templatesCmd, false},
		{"status", "PIPELINE.yaml [params] [--json] [--timeout D]", "per sink: the committed offsets, the partitions' ends, the lag, the time since the last commit", statusCmd, true},
		{"iceberg", "compact|expire [TABLE] [--pipeline FILE [--sink NAME]] [--catalog-property K=V]... [flags]", "one-off maintenance of an Iceberg table: compact its small files, or expire old snapshots keeping the pipelines' checkpoints", icebergCmd, true},
		{"graph", "PIPELINE.yaml [params] [--format dot|mermaid]", "print the pipeline's graph", graphCmd, true},
		{"diff", "OLD.yaml NEW.yaml [params] [--json] [--quiet]", "semantic diff of two pipelines and whether NEW resumes from OLD's checkpoints; exit 1 if not", diffCmd, true},
		{"schema", "[TYPE]", "print the JSON Schema of the pipeline format, for editors (docs/editors.md); with TYPE, of that type's config", schemaCmd, false},
		{"fmt", "[--check] [--diff] FILE|DIR...", "format pipeline files canonically, keeping comments; --check lists those that are not (exit 1)", fmtCmd, true},
		{"dev", "kafka|bigquery [flags]", "run a local Kafka-protocol broker or BigQuery Storage Write API server for development", devCmd, false},
		{"version", "", "print the version", versionCmd, false},
		{"completion", "bash|zsh|fish", "print a shell completion script: source <(sluice completion bash)", completionCmd, false},
	}
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	stdinRead = nil // this command has not read standard input yet
	logroute.Libraries()
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	if args[0] == "help" && len(args) > 1 { // sluice help run: as sluice run --help
		args = []string{args[1], "--help"}
	}
	if isHelp(args[0]) || args[0] == "help" {
		usage(stdout)
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		return versionCmd(nil, stdout, stderr)
	}
	var names []string
	for _, c := range commands() {
		if c.name == args[0] {
			if helpAsked(args[1:]) {
				return commandHelp(c, args[1:], stdout)
			}
			return c.run(args[1:], stdout, stderr)
		}
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "sluice: unknown command %q%s\n", args[0], diag.DidYouMean(args[0], names))
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "sluice runs declarative YAML streaming pipelines (Beam YAML compatible).")
	fmt.Fprintln(w, "\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  sluice %-9s %s\n  %10s %s\n", c.name, c.args, "", c.summary)
	}
	fmt.Fprintln(w, "\nTemplate params: "+paramsUsage)
	fmt.Fprintln(w, "A built-in template stands where a pipeline file does: sluice run template:Kafka_To_Iceberg -p ...")
	fmt.Fprintln(w, "\nExit codes: 0 success, 1 invalid pipeline or failed test, 2 usage error, 3 runtime failure.")
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// helpAsked reports whether a command's arguments ask for its help (before a "--").
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// commandHelp prints a command's usage, summary and flags on stdout and exits 0, as a help
// asked for is output, not an error. A command with flags prints them itself: its flag set
// answers -h with its Usage (parse) on the writer it is given for errors, here stdout.
func commandHelp(c command, args []string, stdout io.Writer) int {
	fmt.Fprintf(stdout, "usage: sluice %s %s\n\n%s\n", c.name, c.args, c.summary)
	if c.name == "dev" && len(args) > 0 && !isHelp(args[0]) {
		c.run(args, io.Discard, stdout) // sluice dev kafka --help: the service's flags
	} else if c.flags {
		c.run([]string{"--help"}, io.Discard, stdout)
	}
	return exitOK
}

// The release build stamps these (scripts/release: -ldflags "-X main.version=v1.2.3
// -X main.commit=... -X main.date=..."); a build without them says what Go recorded.
var version, commit, date string

func versionCmd(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "sluice %s\n", sluiceVersion())
	return exitOK
}

// sluiceVersion is the version the release build stamped, with its commit and build date;
// else the module version of the binary, or for a build from a work tree "(devel)" with the
// commit it was built from.
func sluiceVersion() string {
	if version != "" {
		v := version
		if commit != "" {
			v += " commit " + commit
		}
		if date != "" {
			v += " built " + date
		}
		return v
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v, modified := "(devel)", false
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += " " + s.Value[:12]
		case s.Key == "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		v += " with changes"
	}
	return v
}

// parse parses flags that may stand before, between or after the positional arguments, as
// users type them ("sluice run p.yaml --for 10s").
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "\nflags of sluice %s:\n", fs.Name())
		fs.PrintDefaults()
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, true
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// report prints an error: diagnostics one per line, anything else after "sluice: ". Secrets
// of the pipelines loaded are masked.
func report(stderr io.Writer, err error) {
	var list diag.List
	if errors.As(err, &list) {
		fmt.Fprintln(stderr, shown.Mask(list.Error()))
		if len(list) > 1 {
			fmt.Fprintf(stderr, "%d problems\n", len(list))
		}
		return
	}
	fmt.Fprintf(stderr, "sluice: %s\n", shown.Mask(strings.TrimSpace(err.Error())))
}

// lazyRegexp compiles expr when it is first used: every command starts, and only one uses
// each expression, so none is compiled at start (docs/operations.md, "Start-up").
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
