package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/kafka"
	"github.com/sluicehq/sluice/internal/binread"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/combine"
)

// This file splits a run at a grouping (Combine, GroupByKey, Join) downstream of a source that
// copies of the pipeline share in a consumer group (docs/scaling.md): each copy reads only
// some partitions, so the rows of one key are spread over copies. The upstream part writes the
// grouping's input rows to a repartition topic keyed by the grouping key, exactly once, with
// the source's offsets in the same transaction (WriteToKafka's commit); the downstream part
// reads the topic back in a consumer group of its own, so the rows of a key meet in one
// partition and one copy, and the grouping keeps its state per partition of the topic
// (component.Keyed), handed over with the partition. Both parts are one run: two source
// chains with their own sinks, cut into the same epochs.

// splitPlan is what a run knows of its split groupings.
type splitPlan struct {
	// by maps each split grouping to the source whose partitions split its state: the
	// repartition topic's reader, or a source partitioned by the key already.
	by map[*Node]*Node
	// readers are the repartition topics' readers, which end (with --stop-at-end) only once
	// the upstream part has ended and committed.
	readers map[*Node]bool
	ending  bool // the readers were told to end (endRepartition)
}

// repartitionType is the Type of the nodes a split adds to the plan.
const repartitionType = "Repartition"

// WithRepartitions returns p as a run executes it: with the repartition stage of every
// grouping downstream of a grouped source (a writer of the topic, a reader, and the nodes
// between), so that `sluice status` shows the stage's checkpoint and lag as any other sink's.
func WithRepartitions(p *Plan) (*Plan, error) {
	split, _, err := splitForCopies(p)
	return split, err
}

// splitForCopies returns p with a repartition stage before every grouping downstream of a
// grouped source, and which groupings it split. p itself is not changed: its nodes are
// copied.
func splitForCopies(p *Plan) (*Plan, splitPlan, error) {
	sp := splitPlan{by: map[*Node]*Node{}, readers: map[*Node]bool{}}
	var keyed []*Node
	for _, n := range p.Nodes {
		if _, ok := n.Impl.(component.Keyed); ok && groupedUpstream(n) != nil {
			keyed = append(keyed, n)
		}
	}
	if len(keyed) == 0 {
		return p, sp, nil
	}
	copies := map[*Node]*Node{}
	out := *p
	out.Nodes = nil
	for _, n := range p.Nodes {
		c := *n
		c.Inputs = slices.Clone(n.Inputs)
		for i := range c.Inputs {
			c.Inputs[i].From = copies[c.Inputs[i].From]
		}
		copies[n] = &c
		if slices.Contains(keyed, n) {
			nodes, reader, topic, err := repartition(p, &c, groupedUpstream(n))
			if err != nil {
				return nil, sp, err
			}
			out.Nodes = append(out.Nodes, nodes...)
			sp.by[&c], sp.readers[reader] = reader, true
			c.Impl.(component.Keyed).SplitBy(kafka.SourceName(topic))
		}
		out.Nodes = append(out.Nodes, &c)
	}
	return &out, sp, nil
}

// groupedUpstream returns the source upstream of n that reads in a consumer group, if any.
func groupedUpstream(n *Node) *Node {
	for _, e := range n.Inputs {
		if g, ok := e.From.Impl.(component.Grouped); ok && g.Group() != "" {
			return e.From
		}
		if s := groupedUpstream(e.From); s != nil {
			return s
		}
	}
	return nil
}

// repartition rewires grouping n (a copy, whose inputs are copies) to read its inputs back
// from a repartition topic, and returns the nodes it adds: an encoder per input, the topic's
// writer and reader, and a decoder whose output per input feeds n.
func repartition(p *Plan, n *Node, src *Node) ([]*Node, *Node, string, error) {
	topic := p.Options.Name + "-" + n.Name + "-repartition"
	sink, source, err := kafka.Repartition(src.Impl.(component.Source), topic, p.Options.RepartitionPartitions, n.Name)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s (%s): %w", n.Describe(), n.Pos, err)
	}
	hidden := func(role string, impl any, outs ...component.Output) *Node {
		return &Node{Type: repartitionType, Name: n.Name + "/repartition-" + role, Pos: n.Pos, Impl: impl, Outputs: outs}
	}
	writer := hidden("write", sink)
	reader := hidden("read", source, component.Output{Tag: component.Main, Schema: rawPayload})
	dec := &repartitionDecode{what: n.Describe()}
	decoder := hidden("decode", dec)
	nodes := []*Node{}
	for i, e := range n.Inputs {
		out, _ := e.From.Output(e.Tag)
		enc := hidden("encode"+strconv.Itoa(i), &repartitionEncode{keyed: n.Impl.(component.Keyed), input: i},
			component.Output{Tag: component.Main, Schema: kafka.RepartitionSchema})
		enc.Inputs = []Edge{e}
		writer.Inputs = append(writer.Inputs, Edge{From: enc, Tag: component.Main})
		nodes = append(nodes, enc)
		tag := inputTag(i)
		dec.schemas = append(dec.schemas, out.Schema)
		decoder.Outputs = append(decoder.Outputs, component.Output{Tag: tag, Schema: out.Schema})
		n.Inputs[i] = Edge{From: decoder, Tag: tag, Key: e.Key}
	}
	decoder.Inputs = []Edge{{From: reader, Tag: component.Main}}
	return append(nodes, writer, reader, decoder), reader, topic, nil
}

var rawPayload = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})

// inputTag is the decoder's output for input i of the grouping.
func inputTag(i int) string { return "input" + strconv.Itoa(i) }

// repartitionEncode turns the rows of one input of a grouping into repartition records: the
// grouping key, and a value with the input, where the row was first read, its event time
// and its values.
type repartitionEncode struct {
	keyed component.Keyed
	input int
}

func (e *repartitionEncode) Process(_ context.Context, _ int, b *schemas.Batch, emit component.Emit) error {
	out := &schemas.Batch{Schema: kafka.RepartitionSchema, Rows: make([]schemas.Row, len(b.Rows)), Pos: b.Pos, Time: b.Time}
	for i, row := range b.Rows {
		key, err := e.keyed.AppendKey(nil, e.input, row)
		if err != nil {
			return &component.RowError{Pos: b.Pos[i], Err: err}
		}
		origin := b.Pos[i]
		if b.Origin != nil {
			origin = b.Origin[i]
		}
		v := binary.AppendUvarint(nil, uint64(e.input))
		v = binary.AppendUvarint(v, uint64(len(origin.Source)))
		v = append(v, origin.Source...)
		v = binary.AppendVarint(v, int64(origin.Partition))
		v = binary.AppendVarint(v, origin.Offset)
		v = binary.AppendVarint(v, b.Time[i].UnixNano())
		if v, err = combine.AppendRow(v, row); err != nil {
			return &component.RowError{Pos: b.Pos[i], Err: fmt.Errorf("writing the row to the repartition topic: %w", err)}
		}
		out.Rows[i] = schemas.Row{key, v}
	}
	return emit(component.Main, out)
}

// repartitionDecode turns repartition records back into the grouping's input rows, each on
// the output of its input, positioned in the repartition topic, with their event time and
// where they were first read (Batch.Origin).
type repartitionDecode struct {
	what    string
	schemas []*schemas.Schema // per input
}

func (d *repartitionDecode) Process(_ context.Context, _ int, b *schemas.Batch, emit component.Emit) error {
	outs := make([]*schemas.Batch, len(d.schemas))
	for i, row := range b.Rows {
		payload, _ := row[0].([]byte)
		r := binread.Reader{B: payload, Damaged: fmt.Errorf("%s: a repartition record is damaged", d.what)}
		input := int(r.Uvarint())
		origin := schemas.Position{Source: string(r.Bytes()), Partition: int32(r.Varint()), Offset: r.Varint()}
		at := r.Varint()
		if r.Err != nil || input >= len(outs) {
			return &component.RowError{Pos: b.Pos[i], Err: fmt.Errorf("%s: a repartition record is damaged", d.what)}
		}
		values, _, err := combine.ReadRow(r.B)
		if err != nil {
			return &component.RowError{Pos: b.Pos[i], Err: fmt.Errorf("%s: a repartition record is damaged: %w", d.what, err)}
		}
		o := outs[input]
		if o == nil {
			o = &schemas.Batch{Schema: d.schemas[input]}
			outs[input] = o
		}
		o.Rows = append(o.Rows, schemas.Row(values))
		o.Pos = append(o.Pos, b.Pos[i])
		o.Time = append(o.Time, time.Unix(0, at).UTC())
		o.Origin = append(o.Origin, origin)
	}
	for i, o := range outs {
		if o != nil {
			if err := emit(inputTag(i), o); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSplit refuses what a split run cannot do: a grouping downstream of a grouped source
// that was not split (it cannot say its rows' keys), and a sink of a split grouping that
// does not keep a checkpoint per copy.
func (r *run) checkSplit(n *Node, s *sourceState) error {
	src := r.split.by[n]
	if src == nil {
		return fmt.Errorf("%s (%s) groups by key and window, but %s (%s) reads in consumer group %q, whose copies each see only some partitions, and %s cannot be split across them by key (a Sql GROUP BY cannot yet): run one copy without group.id",
			n.Describe(), n.Pos, s.node.Describe(), s.node.Pos, s.src.(component.Grouped).Group(), n.Type)
	}
	for _, k := range r.sinks {
		if !r.reaches(n, k.node) {
			continue
		}
		if _, ok := k.sink.(component.CopiesReloader); !ok {
			return fmt.Errorf("%s (%s) cannot hold the window state of %s (%s) split across copies of the pipeline: it keeps one checkpoint for all copies; write the groupings' results to WriteToKafka (other sinks: not built yet)",
				k.node.Describe(), k.node.Pos, n.Describe(), n.Pos)
		}
	}
	return nil
}

// windowParts returns, for the partitions parts of source s, the partitions of the results
// of the groupings split by s: a sink drops the results a partition's earlier owner committed.
func (r *run) windowParts(s *sourceState, parts []component.Partition) []component.Partition {
	var out []component.Partition
	for n, src := range r.split.by {
		if src != s.node {
			continue
		}
		for _, p := range parts {
			out = append(out, component.Partition{Source: "window:" + n.Name, Partition: p.Partition})
		}
	}
	return out
}

// adoptTasks gives the groupings split by s the state of partitions parts newly assigned: per
// partition, the task of the copy that last moved it (the highest offset, then fired
// offset, over the copies' checkpoints), from the sink that is furthest behind.
func (r *run) adoptTasks(ctx context.Context, s *sourceState, parts []component.Partition) error {
	for n, src := range r.split.by {
		if src != s.node {
			continue
		}
		keyed := n.Impl.(component.Keyed)
		chosen := map[int32]*component.Task{}
		for _, k := range r.sinks {
			if !slices.Contains(r.state.upstream[k], n) {
				continue
			}
			last, err := r.lastTasks(ctx, k, n, keyed)
			if err != nil {
				return err
			}
			for p, t := range last {
				if c := chosen[p]; c == nil || later(*c, *t) {
					chosen[p] = t
				}
			}
		}
		var taken []int32
		for _, p := range parts {
			if err := keyed.Adopt(p.Partition, chosen[p.Partition]); err != nil {
				return n.InStage(err)
			}
			if chosen[p.Partition] != nil {
				taken = append(taken, p.Partition)
			}
		}
		r.log.Info("window state of assigned partitions taken from the copies' checkpoints", "transform", n.Name, "partitions", fmt.Sprint(taken))
	}
	return nil
}

// lastTasks returns, per partition, the last task of grouping n over the copies' checkpoints
// of sink k.
func (r *run) lastTasks(ctx context.Context, k *sinkState, n *Node, keyed component.Keyed) (map[int32]*component.Task, error) {
	cps, err := k.sink.(component.CopiesReloader).ReloadCopies(ctx)
	if err != nil {
		return nil, k.node.InStage(fmt.Errorf("reading the copies' checkpoints for the window state of newly assigned partitions: %w", err))
	}
	out := map[int32]*component.Task{}
	for _, cp := range cps {
		if len(cp.State) == 0 {
			continue
		}
		snaps, err := decodeStates(cp.State)
		if err != nil {
			return nil, k.node.InStage(fmt.Errorf("a copy's checkpoint holds damaged window state: %w", err))
		}
		snap, ok := snaps[n.Name]
		if !ok {
			continue
		}
		tasks, err := keyed.Tasks(snap)
		if err != nil {
			return nil, n.InStage(err)
		}
		for p, t := range tasks {
			if c := out[p]; c == nil || later(t, *c) {
				out[p] = &t
			}
		}
	}
	return out, nil
}

// later reports whether task a is further than b: a higher input offset, or the same with a
// higher fired offset.
func later(a, b component.Task) bool {
	return a.Next > b.Next || (a.Next == b.Next && a.Fired > b.Fired)
}

// endRepartition makes, with --stop-at-end, the repartition readers end once every other
// source has ended and everything read was committed: what they then read is all the
// upstream part wrote.
func (r *run) endRepartition(ctx context.Context, committed bool) error {
	if !r.cfg.StopAtEnd || len(r.split.readers) == 0 || r.split.ending || !committed {
		return nil
	}
	for _, s := range r.sources {
		if !r.split.readers[s.node] && !s.ended.Load() {
			return nil
		}
	}
	r.split.ending = true
	r.log.Info("the sources upstream of the repartition topics ended and were committed: the topics are read to their ends")
	for _, s := range r.sources {
		if r.split.readers[s.node] {
			if err := s.src.(interface{ EndNow(context.Context) error }).EndNow(ctx); err != nil {
				return s.node.InStage(err)
			}
			s.interrupt() // a Read waiting for records that will not come looks at the end

		}
	}
	return nil
}

// revokeTasks sets the tasks of the partitions a source gave up aside, after their commit.
func (r *run) revokeTasks(s *sourceState, parts []component.Partition) {
	for n, src := range r.split.by {
		if src != s.node {
			continue
		}
		ps := make([]int32, len(parts))
		for i, p := range parts {
			ps[i] = p.Partition
		}
		n.Impl.(component.Keyed).Revoke(ps)
	}
}
