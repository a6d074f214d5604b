package webui

import (
	"cmp"
	"maps"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas"
)

// State is what /api/state answers: the graph with each node's counters, lag, commits and
// error samples. Counters are totals; the page works out rates from two answers and At.
type State struct {
	Pipeline  string             `json:"pipeline"`
	At        int64              `json:"at"`    // Unix milliseconds when the counters were read
	Live      string             `json:"live"`  // "ok", or why not (/healthz)
	Ready     string             `json:"ready"` // "ok", or why not (/readyz)
	Epochs    *float64           `json:"epochs"`
	ErrorRows *float64           `json:"error_rows"`
	Nodes     []NodeState        `json:"nodes"`
	Edges     []runner.GraphEdge `json:"edges"`
	Lag       []Lag              `json:"lag"`
	Commits   []Commit           `json:"commits"` // per sink, by name, newest first
	Errors    []Sample           `json:"errors"`  // newest first
}

// NodeState is a node of the graph with its counters. A counter the run does not export (a
// kind of node that has none, or a build without that metric) is null: the page shows a dash.
type NodeState struct {
	Name       string             `json:"name"`
	Type       string             `json:"type"`
	Kind       string             `json:"kind"`  // source, transform or sink
	Layer      int                `json:"layer"` // column: the longest path from a node without inputs
	Row        int                `json:"row"`   // place in its column
	In         *float64           `json:"in"`
	Out        *float64           `json:"out"`
	Outputs    map[string]float64 `json:"outputs,omitempty"` // rows out per output tag
	Errors     *float64           `json:"errors"`
	StateBytes *float64           `json:"state_bytes,omitempty"`
	LastCommit *float64           `json:"last_commit,omitempty"` // Unix seconds, sinks only
}

// Lag is how far a source's partition is behind the end of its input.
type Lag struct {
	Source    string   `json:"source"`
	Partition string   `json:"partition"`
	Records   *float64 `json:"records"`
	Seconds   *float64 `json:"seconds"`
}

// Commit is one commit of a sink, with the lineage of the spec that made it (the spec's
// shape left out: the page does not show it).
type Commit struct {
	Sink      string                     `json:"sink"`
	Epoch     uint64                     `json:"epoch"`
	At        time.Time                  `json:"at"`
	Next      map[string]map[int32]int64 `json:"next"`
	SpecHash  string                     `json:"spec_hash"`
	Version   string                     `json:"version"`
	GitCommit string                     `json:"git_commit,omitempty"`
	GitDirty  bool                       `json:"git_dirty,omitempty"`
}

// Sample is a row sent to an error output, as JSON text with the plan's secrets masked.
type Sample struct {
	Node   string    `json:"node"`
	Output string    `json:"output"`
	At     time.Time `json:"at"`
	Row    string    `json:"row"`
}

// maxSample is how many bytes of an error row the page shows.
const maxSample = 2000

// state reads the run's counters from the registry and its recent commits and errors.
func (s *Server) state() (*State, error) {
	fams, err := s.cfg.Metrics.Gather()
	if err != nil {
		return nil, err
	}
	m := index(fams)
	p := s.cfg.Plan
	st := &State{Pipeline: p.Options.Name, At: time.Now().UnixMilli(), Edges: p.Graph(),
		Live: probe(s.cfg.Health.Live), Ready: probe(s.cfg.Health.Ready),
		Epochs: m.sum("sluice_epochs_committed_total", "", ""), ErrorRows: m.sum("sluice_error_rows_total", "", ""),
		Lag: m.lag(), Nodes: []NodeState{}, Commits: []Commit{}, Errors: []Sample{}}
	for _, n := range p.Nodes {
		st.Nodes = append(st.Nodes, nodeState(n, m))
	}
	layout(st.Nodes, st.Edges)
	if st.Edges == nil {
		st.Edges = []runner.GraphEdge{}
	}
	commits := s.cfg.Recent.Commits()
	for _, sink := range slices.Sorted(maps.Keys(commits)) {
		for _, c := range commits[sink] {
			cm := Commit{Sink: c.Sink, Epoch: c.Epoch, At: c.At, Next: c.Next}
			if l := c.Lineage; l != nil {
				cm.SpecHash, cm.Version, cm.GitCommit, cm.GitDirty = l.SpecHash, l.Version, l.GitCommit, l.GitDirty
			}
			st.Commits = append(st.Commits, cm)
		}
	}
	for _, e := range s.cfg.Recent.Errors() {
		st.Errors = append(st.Errors, Sample{Node: e.Node, Output: e.Output, At: e.At, Row: schemas.Clip(p.Secrets.Mask(string(e.Row)), maxSample, "…")})
	}
	return st, nil
}

// nodeState is n with its counters. Every counter is looked up by n's name, so that a
// metric a later build adds for a kind of node shows without a change here.
func nodeState(n *runner.Node, m metricIndex) NodeState {
	ns := NodeState{Name: n.Name, Type: n.Type, Kind: "transform",
		Errors: m.sum("sluice_transform_error_rows_total", "transform", n.Name), StateBytes: m.sum("sluice_state_bytes", "transform", n.Name)}
	switch {
	case n.Spec != nil && n.Spec.Kind == component.KindSource:
		ns.Kind, ns.Out = "source", m.sum("sluice_records_read_total", "source", n.Name)
	case n.Spec != nil && n.Spec.Kind == component.KindSink:
		ns.Kind, ns.In = "sink", m.sum("sluice_rows_written_total", "sink", n.Name)
		ns.LastCommit = m.sum("sluice_last_commit_timestamp_seconds", "sink", n.Name)
	default:
		ns.In = m.sum("sluice_transform_rows_in_total", "transform", n.Name)
		ns.Out = m.sum("sluice_transform_rows_out_total", "transform", n.Name)
		ns.Outputs = m.by("sluice_transform_rows_out_total", "transform", n.Name, "output")
	}
	return ns
}

// layout places the nodes (in topological order) in columns by their longest path from a
// node without inputs, and in each column in file order.
func layout(nodes []NodeState, edges []runner.GraphEdge) {
	for _, e := range edges { // edges come in the order of their consumers, so inputs are placed first
		nodes[e.To].Layer = max(nodes[e.To].Layer, nodes[e.From].Layer+1)
	}
	rows := map[int]int{}
	for i := range nodes {
		nodes[i].Row = rows[nodes[i].Layer]
		rows[nodes[i].Layer]++
	}
}

// probe is "ok" or why check failed.
func probe(check func() error) string {
	if err := check(); err != nil {
		return err.Error()
	}
	return "ok"
}

// sample is one value of a metric family with its labels.
type sample struct {
	labels map[string]string
	value  float64
}

// metricIndex holds the gathered samples by family name.
type metricIndex map[string][]sample

func index(fams []*dto.MetricFamily) metricIndex {
	m := metricIndex{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			s := sample{labels: map[string]string{}}
			for _, l := range mt.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case mt.Counter != nil:
				s.value = mt.Counter.GetValue()
			case mt.Gauge != nil:
				s.value = mt.Gauge.GetValue()
			case mt.Untyped != nil:
				s.value = mt.Untyped.GetValue()
			default:
				continue // histograms and summaries: not shown
			}
			m[f.GetName()] = append(m[f.GetName()], s)
		}
	}
	return m
}

// sum adds the samples of name whose label is value (all of them when label is ""); nil
// when there are none.
func (m metricIndex) sum(name, label, value string) *float64 {
	var total float64
	found := false
	for _, s := range m[name] {
		if label == "" || s.labels[label] == value {
			total += s.value
			found = true
		}
	}
	if !found {
		return nil
	}
	return &total
}

// by is sum per value of the label key, over the samples of name whose label is value.
func (m metricIndex) by(name, label, value, key string) map[string]float64 {
	var out map[string]float64
	for _, s := range m[name] {
		if s.labels[label] == value {
			if out == nil {
				out = map[string]float64{}
			}
			out[s.labels[key]] += s.value
		}
	}
	return out
}

// lag joins the lag in records and in seconds of every source partition.
func (m metricIndex) lag() []Lag {
	type key struct{ source, partition string }
	byKey := map[key]*Lag{}
	var order []key
	add := func(name string, set func(*Lag, *float64)) {
		for _, s := range m[name] {
			k := key{s.labels["source"], s.labels["partition"]}
			if byKey[k] == nil {
				byKey[k] = &Lag{Source: k.source, Partition: k.partition}
				order = append(order, k)
			}
			v := s.value
			set(byKey[k], &v)
		}
	}
	add("sluice_source_lag_records", func(l *Lag, v *float64) { l.Records = v })
	add("sluice_source_lag_seconds", func(l *Lag, v *float64) { l.Seconds = v })
	slices.SortFunc(order, func(a, b key) int {
		// Partitions are numbers: a shorter one is smaller.
		return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(len(a.partition), len(b.partition)), cmp.Compare(a.partition, b.partition))
	})
	out := make([]Lag, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}
