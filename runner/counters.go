package runner

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// This file counts rows per node (sluice_transform_rows_*, docs/operations.md): every lane
// has counters of its own, added to once per batch, so the lanes never write the same memory;
// a scrape sums them over the lanes.

// nodeCounts are one lane's counts of one node.
type nodeCounts struct {
	in     atomic.Int64   // rows delivered to the node's inputs
	errors atomic.Int64   // rows the node sent to its error output
	out    []atomic.Int64 // rows it emitted, per output of run.outTags
}

// wireCounts gives every lane its counters and every node its output tags: those it declared
// and those its consumers read, error outputs aside.
func (r *run) wireCounts() {
	r.nodeIndex, r.outTags = map[*Node]int{}, map[*Node][]string{}
	for i, n := range r.plan.Nodes {
		r.nodeIndex[n] = i
		var tags []string
		for _, o := range n.Outputs {
			if !o.Errors {
				tags = append(tags, o.Tag)
			}
		}
		for tag := range r.consumers[n] {
			if !slices.Contains(tags, tag) && !r.isErrorTag(n, tag) {
				tags = append(tags, tag)
			}
		}
		slices.Sort(tags)
		r.outTags[n] = tags
	}
	r.counts = make([][]nodeCounts, r.lanes)
	for l := range r.counts {
		r.counts[l] = make([]nodeCounts, len(r.plan.Nodes))
		for i, n := range r.plan.Nodes {
			r.counts[l][i].out = make([]atomic.Int64, len(r.outTags[n]))
		}
	}
}

func (r *run) isErrorTag(n *Node, tag string) bool {
	return slices.ContainsFunc(n.Outputs, func(o component.Output) bool { return o.Errors && o.Tag == tag })
}

// nodeTotals are a node's counts summed over the lanes.
type nodeTotals struct {
	in, errors int64
	out        []int64 // per output of run.outTags
}

func (r *run) totals(n *Node) nodeTotals {
	i := r.nodeIndex[n]
	t := nodeTotals{out: make([]int64, len(r.outTags[n]))}
	for l := range r.counts {
		c := &r.counts[l][i]
		t.in += c.in.Load()
		t.errors += c.errors.Load()
		for j := range c.out {
			t.out[j] += c.out[j].Load()
		}
	}
	return t
}

// laneOutput is one output of a node as a lane sees it: where its rows go and what counts them.
type laneOutput struct {
	errors  bool
	rows    *atomic.Int64 // the output's count (the node's errors for an error output)
	targets []laneTarget
}

// laneTarget is a consumer of an output with the count of its inputs on the lane.
type laneTarget struct {
	target
	in *atomic.Int64
}

// laneEmitters builds, for one lane, the Emit of every node: it counts the batch and calls the
// consumers of the emitted tag directly.
func (r *run) laneEmitters(ctx context.Context, l int) map[*Node]component.Emit {
	emit := map[*Node]component.Emit{}
	for i, n := range r.plan.Nodes {
		counts := &r.counts[l][i]
		outs := map[string]*laneOutput{}
		for j, tag := range r.outTags[n] {
			outs[tag] = &laneOutput{rows: &counts.out[j]}
		}
		for _, o := range n.Outputs {
			if o.Errors {
				outs[o.Tag] = &laneOutput{errors: true, rows: &counts.errors}
			}
		}
		for tag, ts := range r.consumers[n] {
			for _, t := range ts {
				outs[tag].targets = append(outs[tag].targets, laneTarget{target: t, in: &r.counts[l][r.nodeIndex[t.node]].in})
			}
		}
		sink := r.bySink[n]
		emit[n] = func(tag string, b *schemas.Batch) error {
			o := outs[tag]
			if o == nil {
				return nil // an output nothing reads and the node did not declare
			}
			rows := int64(len(b.Rows))
			o.rows.Add(rows)
			if o.errors {
				r.errorRows.Add(rows)
				r.cfg.Recent.errored(n.Name, tag, b)
				if sink != nil {
					sink.rows.Add(-rows) // a sink's refused rows were counted as written
				}
			}
			for _, t := range o.targets {
				t.in.Add(rows)
				if err := r.deliver(ctx, l, t.target, b, emit); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return emit
}
