package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas"
)

// Sink is what `sluice status` says of one sink (also its --json shape).
type Sink struct {
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	Committed  bool       `json:"committed"` // the sink has a checkpoint
	Epoch      uint64     `json:"epoch,omitempty"`
	LastCommit *time.Time `json:"last_commit,omitempty"`
	// SinceCommit is the time since the last commit, in seconds.
	SinceCommit *float64 `json:"seconds_since_commit,omitempty"`
	// Lag is the records (offsets) between the committed offsets and the ends, over the
	// partitions whose end is known.
	Lag        *int64      `json:"lag,omitempty"`
	Partitions []Partition `json:"partitions"`
	Error      string      `json:"error,omitempty"`
	// WrittenBy is the spec of the last commit.
	WrittenBy *WrittenBy `json:"written_by,omitempty"`
	// Tables are the tables of a sink that writes files into tables (WriteToIceberg), as
	// the caller fills them in (cmd/sluice: the connectors are not this package's imports).
	Tables []Table `json:"tables,omitempty"`
}

// Table is what one table of a sink holds: its current snapshot's files and its last
// compaction.
type Table struct {
	Name         string `json:"name"`
	Rows         int64  `json:"rows"`
	DataFiles    int    `json:"data_files"`
	DeleteFiles  int    `json:"delete_files"`
	AvgFileBytes int64  `json:"avg_data_file_bytes"`
	// LastCompaction is when the table was last compacted, and Compaction what that did.
	LastCompaction *time.Time `json:"last_compaction,omitempty"`
	Compaction     string     `json:"compaction,omitempty"`
}

// String shows the table as one line of sluice status.
func (t Table) String() string {
	s := fmt.Sprintf("table %s: %d rows, %d data files of %s on average, %d delete files", t.Name, t.Rows, t.DataFiles, mib(t.AvgFileBytes), t.DeleteFiles)
	if t.LastCompaction == nil {
		return s + "; never compacted"
	}
	return s + fmt.Sprintf("; last compaction %s (%s ago): %s", t.LastCompaction.UTC().Format(time.RFC3339),
		time.Since(*t.LastCompaction).Round(time.Second), t.Compaction)
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// WrittenBy is the lineage of a commit, without the spec's shape.
type WrittenBy struct {
	SpecHash  string `json:"spec_hash"`
	Version   string `json:"sluice_version,omitempty"`
	GitCommit string `json:"git_commit,omitempty"`
	GitDirty  bool   `json:"git_dirty,omitempty"`
}

// String says which spec wrote a commit.
func (w *WrittenBy) String() string {
	s := "spec " + w.SpecHash
	if w.GitCommit != "" {
		c := w.GitCommit
		if len(c) > 12 {
			c = c[:12]
		}
		s += ", git " + c
		if w.GitDirty {
			s += " with uncommitted changes"
		}
	}
	if w.Version != "" {
		s += ", sluice " + w.Version
	}
	return s
}

// Partition is one source partition of a sink. End and Lag are null when the source
// cannot say where it ends (a generator, files); Committed is null when the sink has not
// committed the partition yet.
type Partition struct {
	Source    string `json:"source"`
	Partition int32  `json:"partition"`
	Committed *int64 `json:"committed"`
	End       *int64 `json:"end"`
	Lag       *int64 `json:"lag"`
}

// Pipeline is what `sluice status` says of a pipeline: every sink's (also its --json shape).
type Pipeline struct {
	Pipeline string `json:"pipeline"`
	File     string `json:"file"`
	SpecHash string `json:"spec_hash"` // of the file as given, to compare with the sinks' written_by
	Sinks    []Sink `json:"sinks"`
}

// Read reads every sink's checkpoint and the ends of the sources upstream of it. A sink
// that cannot be read has its Error set; the others are read all the same.
func Read(ctx context.Context, p *runner.Plan) Pipeline {
	now := time.Now()
	if split, err := runner.WithRepartitions(p); err == nil {
		p = split // a run's repartition stages are sinks and sources of their own
	}
	st := Pipeline{Pipeline: p.Options.Name, File: p.File, SpecHash: p.SpecHash, Sinks: []Sink{}}
	type listed struct {
		ends schemas.Offsets
		err  error
	}
	ends := map[*runner.Node]listed{} // per source node, read once
	endsOf := func(n *runner.Node) listed {
		if l, ok := ends[n]; ok {
			return l
		}
		var l listed
		if eo, ok := n.Impl.(component.EndOffsets); ok {
			l.ends, l.err = eo.EndOffsets(ctx)
		}
		ends[n] = l
		return l
	}
	for _, n := range p.Nodes {
		sink, ok := n.Impl.(component.Sink)
		if !ok {
			continue
		}
		ss := Sink{Name: n.Name, Type: n.Type, Partitions: []Partition{}}
		end := schemas.Offsets{}
		var errs []error
		for _, src := range n.UpstreamSources() {
			l := endsOf(src)
			end.Advance(l.ends)
			if l.err != nil {
				errs = append(errs, l.err)
			}
		}
		cr, ok := sink.(component.CheckpointReader)
		if !ok {
			ss.Error = n.Type + " cannot report its checkpoint"
			st.Sinks = append(st.Sinks, ss)
			continue
		}
		cp, at, err := cr.ReadCheckpoint(ctx, p.Options.Name)
		if err = errors.Join(append([]error{err}, errs...)...); err != nil {
			ss.Error = err.Error()
		}
		var next schemas.Offsets
		if cp != nil {
			ss.Committed, ss.Epoch, next = true, cp.Epoch, cp.Next
			if l := cp.Lineage; l != nil {
				ss.WrittenBy = &WrittenBy{SpecHash: l.SpecHash, Version: l.Version, GitCommit: l.GitCommit, GitDirty: l.GitDirty}
			}
			if !at.IsZero() {
				since := now.Sub(at).Seconds()
				ss.LastCommit, ss.SinceCommit = &at, &since
			}
		}
		ss.Partitions, ss.Lag = partitionsOf(next, end)
		st.Sinks = append(st.Sinks, ss)
	}
	return st
}

// partitionsOf lists every partition of committed and end, in order, with its lag, and the
// sum of the known lags (nil when none is known).
func partitionsOf(committed, end schemas.Offsets) ([]Partition, *int64) {
	all := committed.Clone().Advance(end)
	out := []Partition{}
	var total *int64
	for _, src := range slices.Sorted(maps.Keys(all)) {
		for _, part := range slices.Sorted(maps.Keys(all[src])) {
			ps := Partition{Source: src, Partition: part}
			c, cok := committed.Get(src, part)
			e, eok := end.Get(src, part)
			if cok {
				ps.Committed = &c
			}
			if eok {
				ps.End = &e
			}
			if cok && eok {
				lag := max(e-c, 0)
				ps.Lag = &lag
				if total == nil {
					total = new(int64)
				}
				*total += lag
			}
			out = append(out, ps)
		}
	}
	return out, total
}

// Print prints the status as a table, one line per sink and source partition, and then what
// each sink's lag and last commit mean.
func Print(w io.Writer, st Pipeline) {
	fmt.Fprintf(w, "pipeline %s (%s)\n\n", st.Pipeline, st.File)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SINK\tEPOCH\tLAST COMMIT\tSOURCE\tPARTITION\tCOMMITTED\tEND\tLAG")
	for _, s := range st.Sinks {
		name, epoch, last := s.Name, "-", "never"
		if s.Committed {
			epoch = strconv.FormatUint(s.Epoch, 10)
		}
		if s.SinceCommit != nil {
			last = time.Duration(*s.SinceCommit*float64(time.Second)).Round(time.Second).String() + " ago"
		}
		if len(s.Partitions) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\n", name, epoch, last)
		}
		for _, ps := range s.Partitions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", name, epoch, last, ps.Source, ps.Partition, show(ps.Committed), show(ps.End), show(ps.Lag))
			name, epoch, last = "", "", ""
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, s := range st.Sinks {
		switch {
		case s.Error != "":
			fmt.Fprintf(w, "%s: %s\n", s.Name, s.Error)
		case s.Lag != nil:
			fmt.Fprintf(w, "%s: lag %d (offsets between what it committed and the ends of the partitions)\n", s.Name, *s.Lag)
		case !s.Committed:
			fmt.Fprintf(w, "%s: nothing committed yet\n", s.Name)
		}
	}
	for _, s := range st.Sinks {
		for _, t := range s.Tables {
			fmt.Fprintf(w, "%s: %s\n", s.Name, t)
		}
	}
	for _, s := range st.Sinks {
		if s.WrittenBy != nil {
			fmt.Fprintf(w, "%s: last commit written by %s\n", s.Name, s.WrittenBy)
		}
	}
	if st.SpecHash != "" {
		fmt.Fprintf(w, "this file is spec %s\n", st.SpecHash)
	}
}

func show(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}
