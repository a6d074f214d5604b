package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/iceberg"
	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/tools/status"
)

// pipelineStatus is the --json shape of sluice status, which the end-to-end tests of this
// package decode.
type pipelineStatus = status.Pipeline

// statusCmd prints, per sink, the committed offsets, the partitions' ends, the lag and the
// time since the last commit (tools/status).
func statusCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 30*time.Second, "give up reading checkpoints and offsets after this long")
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
		fmt.Fprintln(stderr, "usage: sluice status PIPELINE.yaml [--json] [--timeout 30s] "+paramsUsage)
		return exitUsage
	}
	// An embedded broker with a data directory is read from a copy: a pipeline may be running
	// on the directory.
	embedded.UseSnapshots()
	defer embedded.CloseSnapshots()
	p, err := tf.load(pos[0])
	if err != nil {
		report(stderr, err)
		return exitInvalid
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	st := status.Read(ctx, p)
	addIcebergTables(ctx, p, &st)
	code := exitOK
	for i := range st.Sinks {
		if st.Sinks[i].Error != "" {
			st.Sinks[i].Error = shown.Mask(st.Sinks[i].Error)
			code = exitRuntime
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			report(stderr, err)
			return exitRuntime
		}
		return code
	}
	status.Print(stdout, st)
	return code
}

// addIcebergTables fills in the tables of the WriteToIceberg sinks: data and delete files,
// the average data file size and the last compaction. A table that cannot be read sets the
// sink's error.
func addIcebergTables(ctx context.Context, p *runner.Plan, st *status.Pipeline) {
	for _, n := range p.Nodes {
		s, ok := n.Impl.(component.Sink)
		if !ok {
			continue
		}
		tables, ok, err := iceberg.SinkTableStats(ctx, s, p.Options.Name)
		if !ok {
			continue
		}
		for i := range st.Sinks {
			ss := &st.Sinks[i]
			if ss.Name != n.Name {
				continue
			}
			if err != nil && ss.Error == "" {
				ss.Error = err.Error()
			}
			for _, t := range tables {
				row := status.Table{Name: t.Name, Rows: t.Rows, DataFiles: t.DataFiles, DeleteFiles: t.DeleteFiles}
				if t.DataFiles > 0 {
					row.AvgFileBytes = t.DataBytes / int64(t.DataFiles)
				}
				if t.LastCompaction != nil {
					at := t.CompactedAt
					row.LastCompaction, row.Compaction = &at, t.LastCompaction.String()
				}
				ss.Tables = append(ss.Tables, row)
			}
		}
	}
}
