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
// under a lock, with a watermark over every partition it has seen; or, split by the
// partitions of a repartition topic (tasks.go), one per partition.
type stateful struct {
	plan   Grouping
	source string // Position.Source of the results
	what   string // the transform, for messages
	limit  int64  // the most state it may hold, in bytes (0: no limit)
	inputs int    // with several (a Join), each holds the watermark back until it has records
	fn     window.Fn
	// lateness and idle configure every task's watermark tracker.
	lateness, idle time.Duration

	mu    sync.Mutex
	one   *task // the state when not split
	split splitState
	late  int64 // records that came after their windows fired
}

// task is the state of a grouping, or of one partition of it: the windows, the watermark
// and the fired offset.
type task struct {
	state *State
	marks *window.Tracker
	fired int64 // the offset after the last result fired: its window's end in ms, plus one
	next  int64 // split: the offset of the partition the state covers, at the last Fire
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

// keyer is a Grouping that can say the key of a row: its stateful transform can be split
// across copies (component.Keyed).
type keyer interface {
	AppendKey(dst []byte, input int, row schemas.Row) ([]byte, error)
}

// splittable is a stateful transform whose grouping says its keys: component.Keyed.
type splittable struct{ *stateful }

func (k splittable) AppendKey(dst []byte, input int, row schemas.Row) ([]byte, error) {
	return k.plan.(keyer).AppendKey(dst, input, row)
}

// NewStatefulOver returns the component.Stateful transform that runs g over the windows of fn:
// records added by every lane under one lock, windows fired at the watermark of the
// partitions upstream, the state and the watermarks in the checkpoints (docs/windows.md).
// transforms/sql gives the windows of a query's GROUP BY. When g says its rows' keys, the
// transform is a component.Keyed.
func NewStatefulOver(ctx *component.Context, g Grouping, fn window.Fn, allowedLateness time.Duration) component.Stateful {
	s := &stateful{plan: g, source: "window:" + ctx.Name, what: ctx.Describe(), limit: ctx.Options.StateLimit,
		inputs: len(ctx.Inputs), fn: fn, lateness: allowedLateness,
		idle: cmp.Or(ctx.Options.IdleTimeout, window.DefaultIdleTimeout)}
	s.one = s.newTask(time.Now())
	if _, ok := g.(keyer); ok {
		return splittable{s}
	}
	return s
}

// newTask returns an empty task. With several inputs (a Join), each input counts as a
// partition of its own for the watermark, which holds it back until the input has records
// or goes idle, as Beam's watermark of a join is the smallest of its inputs': a source
// upstream of one input may not have opened its partitions yet when the others' records
// already move the watermark.
func (s *stateful) newTask(now time.Time) *task {
	t := &task{state: s.plan.NewState(s.fn), marks: window.NewTracker(s.lateness, s.idle)}
	if s.inputs > 1 {
		for i := range s.inputs {
			t.marks.Register(inputPartition(i), now)
		}
	}
	return t
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
	if s.split.source != "" {
		return s.processSplit(input, b, emit)
	}
	return s.add(s.one, input, b, emit, time.Now())
}

// add adds a batch to task t.
func (s *stateful) add(t *task, input int, b *schemas.Batch, emit component.Emit, now time.Time) error {
	t.marks.ObserveBatch(b, now)
	if s.inputs > 1 && len(b.Time) > 0 {
		t.marks.Observe(inputPartition(input), window.Nanos(slices.MaxFunc(b.Time, time.Time.Compare)), now)
	}
	stats, err := s.plan.AddInput(t.state, input, b, emit)
	s.late += int64(stats.Late)
	if size := s.size(); err == nil && s.limit > 0 && int64(size) > s.limit {
		err = fmt.Errorf("%s holds %d MiB of window state, over options.state_limit_mb (%d): raise it, shorten the windows or add keys' filters before the grouping",
			s.what, size>>20, s.limit>>20)
	}
	return err
}

// size is the state's size in bytes, over every task.
func (s *stateful) size() int {
	if s.split.source == "" {
		return s.one.state.Size()
	}
	n := 0
	for _, t := range s.split.tasks {
		n += t.state.Size()
	}
	return n
}

func (s *stateful) Stats() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size(), s.late
}

func (s *stateful) Fire(_ context.Context, upstream schemas.Offsets, final bool, emit component.Emit) error {
	s.mu.Lock()
	now := time.Now()
	var out *schemas.Batch
	if s.split.source != "" {
		out = s.fireSplit(upstream, final, now)
	} else {
		for src, parts := range upstream {
			for p := range parts {
				s.one.marks.Register(component.Partition{Source: src, Partition: p}, now)
			}
		}
		out = s.fire(s.one, 0, final, now)
	}
	s.mu.Unlock()
	if out == nil || len(out.Rows) == 0 { // none, or a Join whose windows had nothing to join
		return nil
	}
	return emit(component.Main, out)
}

// fire fires the windows of task t (of partition part) that its watermark closed, or all
// when final, and returns their rows, positioned under the transform's source.
func (s *stateful) fire(t *task, part int32, final bool, now time.Time) *schemas.Batch {
	wm := window.MaxWatermark
	if !final {
		wm = t.marks.Watermark(now)
	}
	results := t.state.Fire(wm)
	if len(results) == 0 {
		return nil
	}
	out := s.plan.Rows(results)
	out.Pos = make([]schemas.Position, len(out.Rows))
	for i, w := range out.Windows {
		at := w[1] / int64(time.Millisecond)
		out.Pos[i] = schemas.Position{Source: s.source, Partition: part, Offset: at}
		t.fired = max(t.fired, at+1)
	}
	return out
}

func (s *stateful) Fired() schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.split.source != "" {
		return s.firedSplit()
	}
	if s.one.fired == 0 {
		return nil
	}
	return schemas.Offsets{s.source: {0: s.one.fired}}
}

// Snapshot encodes the state, the watermark tracker and the fired offset, each with its
// length; split, every task's (tasks.go).
func (s *stateful) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.split.source != "" {
		return s.snapshotSplit()
	}
	return s.one.snapshot()
}

func (t *task) snapshot() ([]byte, error) {
	st, err := t.state.Snapshot()
	if err != nil {
		return nil, err
	}
	b := binary.AppendVarint(nil, t.fired)
	b = binary.AppendUvarint(b, uint64(len(st)))
	b = append(b, st...)
	return append(b, t.marks.Snapshot()...), nil
}

func (s *stateful) Restore(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.split.source != "" {
		return s.restoreSplit(b)
	}
	return s.one.restore(b, time.Now())
}

func (t *task) restore(b []byte, now time.Time) error {
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
	if err := t.state.Restore(b[:size]); err != nil {
		return fmt.Errorf("restoring the window state: %w", err)
	}
	if err := t.marks.Restore(b[size:], now); err != nil {
		return fmt.Errorf("restoring the watermarks: %w", err)
	}
	t.fired = fired
	return nil
}
