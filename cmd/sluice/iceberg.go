package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/iceberg"
	"github.com/sluicehq/sluice/internal/diag"
)

const icebergUsage = `usage: sluice iceberg compact [TABLE] [--pipeline FILE [--sink NAME] [params]] [--catalog-property K=V]... [--catalog-name N] [--target-file-size-mb N] [--min-input-files N] [--json]
       sluice iceberg expire  [TABLE] --older-than D [--pipeline FILE [--sink NAME] [params]] [--catalog-property K=V]... [--catalog-name N] [--json]`

// icebergCmd runs one-off maintenance of an Iceberg table: compact rewrites small data files
// (and the deletes that apply to them) as WriteToIceberg's compaction key does between
// commits; expire drops old snapshots, keeping every pipeline's checkpoint. The catalog is a
// pipeline's WriteToIceberg sink's (--pipeline, --sink), or given by --catalog-property, or
// the local default (./warehouse), as docs/iceberg.md says.
func icebergCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) { // sluice iceberg --help (commandHelp printed the usage)
		fmt.Fprintf(stderr, "\n%s\n\nflags of sluice iceberg (--target-file-size-mb and --min-input-files are compact's, --older-than expire's):\n", icebergUsage)
		icebergFlags("").run(nil, io.Discard, stderr, true)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, icebergUsage)
		return exitUsage
	}
	switch args[0] {
	case "compact", "expire":
		return icebergFlags(args[0]).run(args[1:], stdout, stderr, false)
	}
	fmt.Fprintf(stderr, "sluice iceberg: unknown command %q%s\n%s\n", args[0], diag.DidYouMean(args[0], []string{"compact", "expire"}), icebergUsage)
	return exitUsage
}

// icebergMaint is one `sluice iceberg` command and its flags.
type icebergMaint struct {
	op             string
	fs             *flag.FlagSet
	tf             *templateFlags
	pipeline, sink string
	catalogName    string
	catalogProps   map[string]string
	targetMB       float64
	minFiles       int
	olderThan      time.Duration
	asJSON         bool
	timeout        time.Duration
}

func icebergFlags(op string) *icebergMaint {
	m := &icebergMaint{op: op, fs: flag.NewFlagSet("iceberg "+op, flag.ContinueOnError)}
	fs := m.fs
	m.tf = addTemplateFlags(fs)
	fs.StringVar(&m.pipeline, "pipeline", "", "take the catalog (and the table, when TABLE is not given) from this pipeline's WriteToIceberg sink")
	fs.StringVar(&m.sink, "sink", "", "the WriteToIceberg sink of --pipeline, by name, when it has several")
	fs.StringVar(&m.catalogName, "catalog-name", "", "the catalog's name, as WriteToIceberg's catalog_name (without --pipeline)")
	fs.Func("catalog-property", "a catalog property K=V, as WriteToIceberg's catalog_properties (repeatable; without --pipeline; none: the local ./warehouse)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q: write K=V, e.g. type=sql", s)
		}
		if m.catalogProps == nil {
			m.catalogProps = map[string]string{}
		}
		m.catalogProps[k] = v
		return nil
	})
	fs.BoolVar(&m.asJSON, "json", false, "print the outcome as JSON")
	fs.DurationVar(&m.timeout, "timeout", 30*time.Minute, "give up after this long")
	if op != "expire" {
		fs.Float64Var(&m.targetMB, "target-file-size-mb", 0, "the size of the files written, in MiB (default: the --pipeline sink's compaction key's, else the table's write.target-file-size-bytes)")
		fs.IntVar(&m.minFiles, "min-input-files", 0, "rewrite a partition's small files only when there are at least this many (default: the --pipeline sink's compaction key's, else 5)")
	}
	if op != "compact" {
		fs.DurationVar(&m.olderThan, "older-than", 0, "expire the snapshots older than this (required), e.g. 24h")
	}
	return m
}

func (m *icebergMaint) run(args []string, stdout, stderr io.Writer, helpOnly bool) int {
	if helpOnly {
		m.fs.SetOutput(stderr)
		m.fs.PrintDefaults()
		return exitOK
	}
	pos, ok := parse(m.fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) > 1 || (m.op == "expire" && m.olderThan <= 0) || (m.pipeline != "" && m.catalogProps != nil) {
		fmt.Fprintln(stderr, icebergUsage)
		fmt.Fprintln(stderr, "(one TABLE at most; expire needs --older-than; --pipeline and --catalog-property exclude each other)")
		return exitUsage
	}
	cat, tableName, err := m.catalog()
	if err != nil {
		report(stderr, err)
		return exitInvalid
	}
	if len(pos) == 1 {
		tableName = pos[0]
	}
	if tableName == "" || strings.ContainsAny(tableName, "{}") {
		fmt.Fprintf(stderr, "sluice iceberg %s: name the table (%q routes rows to several)\n", m.op, tableName)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	var out any
	var text string
	switch m.op {
	case "compact":
		st, err := cat.Compact(ctx, tableName, m.targetMB, m.minFiles)
		if err != nil {
			report(stderr, err)
			return exitRuntime
		}
		out, text = st, fmt.Sprintf("table %s: %s", tableName, st)
	case "expire":
		st, err := cat.Expire(ctx, tableName, m.olderThan)
		if err != nil {
			report(stderr, err)
			return exitRuntime
		}
		out, text = st, fmt.Sprintf("table %s: %d snapshots, %d expired", tableName, st.After, st.Before-st.After)
	}
	if m.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return exitOK
	}
	fmt.Fprintln(stdout, text)
	return exitOK
}

// catalog returns the catalog the flags name, and the table of --pipeline's sink.
func (m *icebergMaint) catalog() (*iceberg.Catalog, string, error) {
	if m.pipeline == "" {
		cat, err := iceberg.NewCatalog(m.catalogName, m.catalogProps)
		return cat, "", err
	}
	p, err := m.tf.load(m.pipeline)
	if err != nil {
		return nil, "", err
	}
	type icebergSink struct {
		name, table string
		cat         *iceberg.Catalog
	}
	var sinks []icebergSink
	for _, n := range p.Nodes {
		s, ok := n.Impl.(component.Sink)
		if !ok || (m.sink != "" && m.sink != n.Name) {
			continue
		}
		if cat, tableName, ok := iceberg.CatalogOf(s); ok {
			sinks = append(sinks, icebergSink{n.Name, tableName, cat})
		}
	}
	switch len(sinks) {
	case 1:
		return sinks[0].cat, sinks[0].table, nil
	case 0:
		if m.sink != "" {
			return nil, "", fmt.Errorf("%s: no WriteToIceberg sink named %q", m.pipeline, m.sink)
		}
		return nil, "", fmt.Errorf("%s: no WriteToIceberg sink", m.pipeline)
	}
	var names []string
	for _, s := range sinks {
		names = append(names, s.name)
	}
	return nil, "", fmt.Errorf("%s: several WriteToIceberg sinks (%s): name one with --sink", m.pipeline, strings.Join(names, ", "))
}
