package combine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

// stateful runs a Plan as a component.Stateful transform: one State fed by every lane under a
// lock, with a watermark over every partition it has seen.
type stateful struct {
	plan   *Plan
	source string // Position.Source of the results
	what   string // the transform, for messages
	limit  int64  // the most state it may hold, in bytes (0: no limit)

	mu    sync.Mutex
	state *State
	marks *window.Tracker
	fired int64 // the offset after the last result fired: its window's end in ms, plus one
	late  int64 // records that came after their windows fired
}

func newStateful[C any](ctx *component.Context, build func(*component.Context, *C) (*Plan, error), cfg *C) (component.Transform, error) {
	spec := window.InEffect(ctx)
	plan, err := build(ctx, cfg)
	if plan == nil || err != nil {
		return nil, err
	}
	return NewStateful(ctx, plan, spec.Fn(), time.Duration(spec.AllowedLateness)), nil
}

// NewStateful runs plan as the component.Stateful transform being built by ctx, over the
// windows of fn: transforms/sql runs a grouped query's aggregation through it.
func NewStateful(ctx *component.Context, plan *Plan, fn window.Fn, allowedLateness time.Duration) component.Stateful {
	return &stateful{plan: plan, source: "window:" + ctx.Name, what: ctx.Describe(), limit: ctx.Options.StateLimit,
		state: plan.NewState(fn),
		marks: window.NewTracker(allowedLateness, cmp.Or(ctx.Options.IdleTimeout, window.DefaultIdleTimeout))}
}

// Process adds the batch's records to their windows; late and failed ones go to the error
// output (or stop the pipeline without one).
func (s *stateful) Process(_ context.Context, _ int, b *schemas.Batch, emit component.Emit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks.ObserveBatch(b, time.Now())
	stats, err := s.plan.AddBatch(s.state, b, emit)
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
	out.Pos = make([]schemas.Position, len(results))
	out.Windows = make([][2]int64, len(results))
	for i, r := range results {
		out.Windows[i] = [2]int64{r.Window.Start, r.Window.End}
		at := r.Window.End / int64(time.Millisecond)
		out.Pos[i] = schemas.Position{Source: s.source, Offset: at}
		s.fired = max(s.fired, at+1)
	}
	s.mu.Unlock()
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
