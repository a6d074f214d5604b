package combine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

func init() {
	component.RegisterTransform("Combine",
		"Combines the records of each key and window (group_by) with sum, count, min, max, mean, all, any, group or concat; windows from `windowing:`.",
		component.Inputs{Min: 1, Max: 1}, func(ctx *component.Context, cfg *CombineConfig) (component.Transform, error) {
			return newStateful(ctx, BuildCombine, cfg)
		})
	component.RegisterTransform("GroupByKey",
		"Collects the records (or values) of each key and window into a list: {key, values}; windows from `windowing:`.",
		component.Inputs{Min: 1, Max: 1}, func(ctx *component.Context, cfg *GroupByKeyConfig) (component.Transform, error) {
			return newStateful(ctx, BuildGroupByKey, cfg)
		})
}

// Grouping is what a stateful transform keeps in a State by key and window: Combine's and
// GroupByKey's Plan, and Join's. NewStateful runs it.
type Grouping interface {
	// NewState returns an empty state for windowing fn.
	NewState(fn window.Fn) *State
	// AddInput adds the rows of b, which came on the transform's input number input, to st,
	// as Plan.AddBatch does.
	AddInput(st *State, input int, b *schemas.Batch, emit component.Emit) (Stats, error)
	// Rows turns fired results into output rows, each with its window in Batch.Windows and
	// its event time in Batch.Time; Pos is left to the caller.
	Rows(rs []Result) *schemas.Batch
}

// AddInput is AddBatch for Grouping: a Combine or GroupByKey has one input.
func (p *Plan) AddInput(st *State, _ int, b *schemas.Batch, emit component.Emit) (Stats, error) {
	return p.AddBatch(st, b, emit)
}

// stateful runs a Grouping as a component.Stateful transform: one State fed by every lane
// under a lock, with a watermark over every partition it has seen.
type stateful struct {
	plan   Grouping
	source string // Position.Source of the results
	what   string // the transform, for messages
	limit  int64  // the most state it may hold, in bytes (0: no limit)
	inputs int    // with several (a Join), each holds the watermark back until it has records

	mu    sync.Mutex
	state *State
	marks *window.Tracker
	fired int64 // the offset after the last result fired: its window's end in ms, plus one
	late  int64 // records that came after their windows fired
}

func newStateful[C any](ctx *component.Context, build func(*component.Context, *C) (*Plan, error), cfg *C) (component.Transform, error) {
	plan, err := build(ctx, cfg)
	if plan == nil || err != nil {
		return nil, err
	}
	return NewStateful(ctx, plan), nil
}

// NewStateful returns the component.Stateful transform that runs g in the windowing in effect
// for ctx (Join's and Combine's).
func NewStateful(ctx *component.Context, g Grouping) component.Stateful {
	spec := window.InEffect(ctx)
	return NewStatefulOver(ctx, g, spec.Fn(), time.Duration(spec.AllowedLateness))
}

// NewStatefulOver returns the component.Stateful transform that runs g over the windows of fn:
// records added by every lane under one lock, windows fired at the watermark of the
// partitions upstream, the state and the watermarks in the checkpoints (docs/windows.md).
// transforms/sql gives the windows of a query's GROUP BY.
func NewStatefulOver(ctx *component.Context, g Grouping, fn window.Fn, allowedLateness time.Duration) component.Stateful {
	s := &stateful{plan: g, source: "window:" + ctx.Name, what: ctx.Describe(), limit: ctx.Options.StateLimit,
		inputs: len(ctx.Inputs), state: g.NewState(fn),
		marks: window.NewTracker(allowedLateness, cmp.Or(ctx.Options.IdleTimeout, window.DefaultIdleTimeout))}
	if s.inputs > 1 {
		// A source upstream of one input may not have opened its partitions yet when the
		// others' records already move the watermark: each input counts as a partition of
		// its own, which holds the watermark back until the input has records or goes idle,
		// as Beam's watermark of a join is the smallest of its inputs'.
		now := time.Now()
		for i := range s.inputs {
			s.marks.Register(inputPartition(i), now)
		}
	}
	return s
}

// inputPartition is the watermark tracker's partition for input i of a grouping with
// several inputs.
func inputPartition(i int) component.Partition {
	return component.Partition{Source: "input", Partition: int32(i)}
}

// Process adds the batch's records to their windows; late and failed ones go to the error
// output (or stop the pipeline without one).
func (s *stateful) Process(_ context.Context, input int, b *schemas.Batch, emit component.Emit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.marks.ObserveBatch(b, now)
	if s.inputs > 1 && len(b.Time) > 0 {
		s.marks.Observe(inputPartition(input), window.Nanos(slices.MaxFunc(b.Time, time.Time.Compare)), now)
	}
	stats, err := s.plan.AddInput(s.state, input, b, emit)
	s.late += int64(stats.Late)
	if err == nil && s.limit > 0 && int64(s.state.Size()) > s.limit {
		err = fmt.Errorf("%s holds %d MiB of window state, over options.state_limit_mb (%d): raise it, shorten the windows or add keys' filters before the grouping",
			s.what, s.state.Size()>>20, s.limit>>20)
	}
	return err
}

func (s *stateful) Stats() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Size(), s.late
}

func (s *stateful) Fire(_ context.Context, upstream schemas.Offsets, final bool, emit component.Emit) error {
	s.mu.Lock()
	now := time.Now()
	for src, parts := range upstream {
		for p := range parts {
			s.marks.Register(component.Partition{Source: src, Partition: p}, now)
		}
	}
	wm := window.MaxWatermark
	if !final {
		wm = s.marks.Watermark(now)
	}
	results := s.state.Fire(wm)
	if len(results) == 0 {
		s.mu.Unlock()
		return nil
	}
	out := s.plan.Rows(results)
	out.Pos = make([]schemas.Position, len(out.Rows))
	for i, w := range out.Windows {
		at := w[1] / int64(time.Millisecond)
		out.Pos[i] = schemas.Position{Source: s.source, Offset: at}
		s.fired = max(s.fired, at+1)
	}
	s.mu.Unlock()
	if len(out.Rows) == 0 { // a Join whose windows had nothing to join
		return nil
	}
	return emit(component.Main, out)
}

func (s *stateful) Fired() schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fired == 0 {
		return nil
	}
	return schemas.Offsets{s.source: {0: s.fired}}
}

// Snapshot encodes the state, the watermark tracker and the fired offset, each with its
// length.
func (s *stateful) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.state.Snapshot()
	if err != nil {
		return nil, err
	}
	b := binary.AppendVarint(nil, s.fired)
	b = binary.AppendUvarint(b, uint64(len(st)))
	b = append(b, st...)
	return append(b, s.marks.Snapshot()...), nil
}

func (s *stateful) Restore(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fired, n := binary.Varint(b)
	if n <= 0 {
		return errors.New("the window state is damaged")
	}
	b = b[n:]
	size, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < size {
		return errors.New("the window state is damaged")
	}
	b = b[n:]
	if err := s.state.Restore(b[:size]); err != nil {
		return fmt.Errorf("restoring the window state: %w", err)
	}
	if err := s.marks.Restore(b[size:], time.Now()); err != nil {
		return fmt.Errorf("restoring the watermarks: %w", err)
	}
	s.fired = fired
	return nil
}
