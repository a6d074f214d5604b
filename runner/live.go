package runner

import (
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Recent keeps what a run did lately that its counters cannot say: each sink's last commits
// with their lineage, and the last rows sent to error outputs. sluice run's web UI shows it
// (docs/operations.md, "Web UI"). The caller makes one, hands it to Execute in RunConfig and
// reads it from any goroutine; the run only appends, and keeps a few of each, so it costs a
// lock per commit and per batch of error rows, nothing on the data path.
type Recent struct {
	mu      sync.Mutex
	now     func() time.Time
	commits map[string][]SinkCommit // sink -> its last commits, oldest first
	errors  []ErrorSample           // oldest first
}

// How many commits per sink and how many error rows a Recent keeps.
const (
	KeptCommits = 3
	KeptErrors  = 10
)

// SinkCommit is one commit of a sink.
type SinkCommit struct {
	Sink    string
	Epoch   uint64
	At      time.Time
	Next    schemas.Offsets // the offsets the checkpoint holds: where each partition resumes
	Lineage *component.Lineage
}

// ErrorSample is one row a transform or sink sent to an error output. Row is the row as JSON;
// it may hold secrets, which the reader masks before showing it (Plan.Secrets).
type ErrorSample struct {
	Node, Output string
	At           time.Time
	Row          []byte
}

// NewRecent returns an empty Recent.
func NewRecent() *Recent { return &Recent{now: time.Now, commits: map[string][]SinkCommit{}} }

// Commits returns every sink's last commits, newest first.
func (r *Recent) Commits() map[string][]SinkCommit {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]SinkCommit, len(r.commits))
	for sink, cs := range r.commits {
		cs = slices.Clone(cs)
		slices.Reverse(cs)
		out[sink] = cs
	}
	return out
}

// Errors returns the last rows sent to error outputs, newest first.
func (r *Recent) Errors() []ErrorSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.errors)
	slices.Reverse(out)
	return out
}

// committed records a sink's commit.
func (r *Recent) committed(sink string, cp component.Checkpoint) {
	if r == nil {
		return
	}
	c := SinkCommit{Sink: sink, Epoch: cp.Epoch, At: r.now(), Next: cp.Next.Clone(), Lineage: cp.Lineage}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits[sink] = keepLast(append(r.commits[sink], c), KeptCommits)
}

// errored records the last rows of a batch node sent to its error output tag. Rows are
// immutable once emitted, but are encoded here anyway, so that the sample shows the row as
// it was and holds no reference into the run's batches.
func (r *Recent) errored(node, tag string, b *schemas.Batch) {
	if r == nil || len(b.Rows) == 0 {
		return
	}
	at := r.now()
	rows := b.Rows[max(0, len(b.Rows)-KeptErrors):]
	samples := make([]ErrorSample, len(rows))
	for i, row := range rows {
		samples[i] = ErrorSample{Node: node, Output: tag, At: at, Row: schemas.AppendJSON(nil, b.Schema, row)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = keepLast(append(r.errors, samples...), KeptErrors)
}

// keepLast drops all but the last n elements of s.
func keepLast[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	return append(s[:0], s[len(s)-n:]...)
}

// GraphEdge is an edge of the graph `sluice graph` draws: From's output feeds To (indexes into
// Plan.Nodes). Label is the output's tag when From has several outputs; Errors says the
// output is an error output.
type GraphEdge struct {
	From   int    `json:"from"`
	To     int    `json:"to"`
	Label  string `json:"label,omitempty"`
	Errors bool   `json:"errors,omitempty"`
}

// Graph returns the edges of p's graph, as DOT and Mermaid draw them.
func (p *Plan) Graph() []GraphEdge {
	var out []GraphEdge
	p.edges(func(from, to int, label string, errs bool) {
		out = append(out, GraphEdge{From: from, To: to, Label: label, Errors: errs})
	})
	return out
}
