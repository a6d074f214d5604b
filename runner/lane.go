package runner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// stageError names the transform a failure happened in.
type stageError struct {
	node *Node
	err  error
}

func (e *stageError) Error() string {
	name := e.node.Describe()
	return fmt.Sprintf("%s (%s): %s", name, e.node.Pos, withoutName(e.err.Error(), name))
}

// withoutName drops the component's name where the component put it, at the front of msg or
// after a first clause of the runner's ("flushing epoch 3: "): the stage error names the
// component already, with its position, and says it once.
func withoutName(msg, name string) string {
	if rest, ok := strings.CutPrefix(msg, name+": "); ok {
		return rest
	}
	if head, tail, ok := strings.Cut(msg, ": "); ok {
		if rest, ok := strings.CutPrefix(tail, name+": "); ok {
			return head + ": " + rest
		}
	}
	return msg
}

func (e *stageError) Unwrap() error { return e.err }

// InStage names n and its position in err (unless err names a transform already), as every
// error out of a lane does. It returns nil for nil.
func (n *Node) InStage(err error) error {
	var se *stageError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &stageError{node: n, err: err}
}

// lane runs the whole DAG for the partitions hashed to it: it decodes each source batch,
// pushes it through the transforms by direct calls and writes to the sinks. At a barrier it
// stops taking from that source until every source has delivered the same barrier (so no
// record of the next epoch slips into this one), flushes its sink writers and reports.
func (r *run) lane(ctx context.Context, l int) error {
	emit := r.laneEmitters(ctx, l)
	cases := make([]reflect.SelectCase, len(r.sources)+1)
	for i, s := range r.sources {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.out[l])}
	}
	cases[len(r.sources)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	closed := make([]bool, len(r.sources))
	open := len(r.sources)
	waiting := 0 // sources blocked at the current barrier
	for open > 0 {
		chosen, v, ok := reflect.Select(cases)
		if chosen == len(r.sources) {
			return ctx.Err()
		}
		cases[chosen].Chan = reflect.Value{} // closed, or blocked at a barrier
		if !ok {
			closed[chosen] = true
			open--
			continue
		}
		it := v.Interface().(item)
		if it.b != nil {
			cases[chosen].Chan = reflect.ValueOf(r.sources[chosen].out[l])
			s := r.sources[chosen]
			if err := s.src.Decode(ctx, it.b, emit[s.node]); err != nil {
				return s.node.InStage(err)
			}
			continue
		}
		if waiting++; waiting < open {
			continue
		}
		if err := r.passBarrier(ctx, l, it.barrier); err != nil {
			return err
		}
		for i, s := range r.sources {
			if !closed[i] {
				cases[i].Chan = reflect.ValueOf(s.out[l])
			}
		}
		waiting = 0
	}
	return nil
}

// passBarrier ends the lane's part of an epoch: its sink writers flush, and the coordinator
// hears that the lane is through.
func (r *run) passBarrier(ctx context.Context, l int, epoch uint64) error {
	if err := r.waitForFiring(ctx, l, epoch); err != nil {
		return err
	}
	start := time.Now()
	for _, k := range r.sinks {
		if err := k.writers[l].Flush(ctx, epoch); err != nil {
			return k.node.InStage(fmt.Errorf("flushing epoch %d: %w", epoch, err))
		}
	}
	select {
	case r.laneDone <- laneReport{epoch: epoch, flush: time.Since(start)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// laneReport is a lane's word that it passed barrier epoch, and how long its flush took.
type laneReport struct {
	epoch uint64
	flush time.Duration
}

func (r *run) deliver(ctx context.Context, l int, t target, b *schemas.Batch, emit map[*Node]component.Emit) error {
	if k := r.bySink[t.node]; k != nil {
		if len(b.Pos) != len(b.Rows) {
			return t.node.InStage(fmt.Errorf("received %d rows with %d positions: the transform before it lost them", len(b.Rows), len(b.Pos)))
		}
		b = k.uncovered(b)
		if len(b.Rows) == 0 {
			return nil
		}
		k.rows.Add(int64(len(b.Rows)))
		if ew, ok := k.writers[l].(component.ErrorWriter); ok {
			return t.node.InStage(ew.WriteWithErrors(ctx, b, emit[t.node]))
		}
		return t.node.InStage(k.writers[l].Write(ctx, b))
	}
	tr := t.node.Impl.(component.Transform)
	return t.node.InStage(tr.Process(ctx, t.input, b, emit[t.node]))
}

// uncovered drops the records the sink's restored checkpoint already holds: after a crash the
// source resumes from the smallest offset over its sinks, so a sink that was ahead sees some
// records again.
func (k *sinkState) uncovered(b *schemas.Batch) *schemas.Batch {
	covered := *k.covered.Load()
	if len(covered) == 0 {
		return b
	}
	first := -1
	for i, p := range b.Pos {
		if covered.Covers(p) {
			first = i
			break
		}
	}
	if first < 0 {
		return b
	}
	out := &schemas.Batch{Schema: b.Schema}
	for i := range b.Rows {
		if covered.Covers(b.Pos[i]) {
			k.skipped.Add(1)
			continue
		}
		out.Rows = append(out.Rows, b.Rows[i])
		out.Pos = append(out.Pos, b.Pos[i])
		if i < len(b.Time) {
			out.Time = append(out.Time, b.Time[i])
		}
	}
	return out
}
