package combine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/binread"
	"github.com/sluicehq/sluice/schemas"
)

// This file splits a grouping by the partitions of its input (component.Keyed): across copies
// of a pipeline, rows reach the grouping through a repartition topic keyed by the grouping
// key, so each partition holds whole groups and its state is a task of its own, as in Kafka
// Streams. A copy keeps the tasks of the partitions it owns; a partition's task moves with the
// partition through the checkpoints (docs/scaling.md).

// splitState is what a split grouping keeps.
type splitState struct {
	source string          // the input's Position.Source whose partitions split the state
	tasks  map[int32]*task // the partitions this copy works on
	// parked are the tasks of partitions given up, or read from this copy's checkpoint and
	// not used since, as snapshotted: they stay in every snapshot, so the partition's next
	// owner finds its last state in this copy's checkpoint.
	parked map[int32]component.Task
	// origins are the partitions the rows came from first (Batch.Origin), over every task: a
	// task's watermark waits for each of them.
	origins map[component.Partition]bool
}

// tasksMagic starts a split snapshot; the digit is the format version.
const tasksMagic = "SLTK1"

var errTasksDamaged = errors.New("the window state of the partitions is damaged")

func (k splittable) SplitBy(source string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.split = splitState{source: source, tasks: map[int32]*task{}, parked: map[int32]component.Task{},
		origins: map[component.Partition]bool{}}
}

// task returns the task of partition part, taking it from the parked ones or starting it.
func (s *stateful) task(part int32, now time.Time) (*task, error) {
	if t := s.split.tasks[part]; t != nil {
		return t, nil
	}
	t := s.newTask(now)
	if p, ok := s.split.parked[part]; ok {
		if err := t.restore(p.State, now); err != nil {
			return nil, fmt.Errorf("%s: partition %d: %w", s.what, part, err)
		}
		t.next = p.Next
		delete(s.split.parked, part)
	}
	t.marks.Register(component.Partition{Source: s.split.source, Partition: part}, now)
	for o := range s.split.origins {
		t.marks.Register(o, now)
	}
	s.split.tasks[part] = t
	return t, nil
}

// processSplit adds the rows of b to the tasks of their partitions.
func (s *stateful) processSplit(input int, b *schemas.Batch, emit component.Emit) error {
	now := time.Now()
	for _, o := range b.Origin {
		p := component.Partition{Source: o.Source, Partition: o.Partition}
		if !s.split.origins[p] {
			s.split.origins[p] = true
			for _, t := range s.split.tasks {
				t.marks.Register(p, now)
			}
		}
	}
	for len(b.Rows) > 0 {
		if b.Pos[0].Source != s.split.source {
			return fmt.Errorf("%s: a row from %s, but its state is split by the partitions of %s", s.what, b.Pos[0].Source, s.split.source)
		}
		part := b.Pos[0].Partition
		n := 1
		for n < len(b.Rows) && b.Pos[n].Source == s.split.source && b.Pos[n].Partition == part {
			n++
		}
		t, err := s.task(part, now)
		if err != nil {
			return err
		}
		one, rest := cut(b, n)
		if one.Origin != nil {
			// The watermark of a task follows the partitions its rows came from first, in
			// whose order they come; the task's own partition interleaves them.
			for i, o := range one.Origin {
				t.marks.Observe(component.Partition{Source: o.Source, Partition: o.Partition}, one.Time[i].UnixNano(), now)
			}
		}
		if err := s.add(t, input, one, emit, now); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// cut splits b after its first n rows.
func cut(b *schemas.Batch, n int) (*schemas.Batch, *schemas.Batch) {
	if n == len(b.Rows) {
		return b, &schemas.Batch{}
	}
	head, tail := *b, *b
	head.Rows, tail.Rows = b.Rows[:n], b.Rows[n:]
	head.Pos, tail.Pos = b.Pos[:n], b.Pos[n:]
	if len(b.Time) == len(b.Rows) {
		head.Time, tail.Time = b.Time[:n], b.Time[n:]
	}
	if len(b.Origin) == len(b.Rows) {
		head.Origin, tail.Origin = b.Origin[:n], b.Origin[n:]
	}
	if len(b.Windows) == len(b.Rows) {
		head.Windows, tail.Windows = b.Windows[:n], b.Windows[n:]
	}
	return &head, &tail
}

// fireSplit fires every task of the partitions upstream (taking up parked ones, so that
// their windows fire without new records) and returns the results.
func (s *stateful) fireSplit(upstream schemas.Offsets, final bool, now time.Time) *schemas.Batch {
	for p, next := range upstream[s.split.source] {
		if t, err := s.task(p, now); err == nil {
			t.next = next
		}
	}
	var out *schemas.Batch
	for _, p := range slices.Sorted(maps.Keys(s.split.tasks)) {
		b := s.fire(s.split.tasks[p], p, final, now)
		switch {
		case b == nil:
		case out == nil:
			out = b
		default:
			out.Rows = append(out.Rows, b.Rows...)
			out.Pos = append(out.Pos, b.Pos...)
			out.Time = append(out.Time, b.Time...)
			out.Windows = append(out.Windows, b.Windows...)
		}
	}
	return out
}

func (s *stateful) firedSplit() schemas.Offsets {
	out := schemas.Offsets{}
	for p, t := range s.split.tasks {
		if t.fired > 0 {
			out.Set(s.source, p, t.fired)
		}
	}
	for p, t := range s.split.parked {
		if _, ok := s.split.tasks[p]; !ok && t.Fired > 0 {
			out.Set(s.source, p, t.Fired)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// snapshotSplit encodes every task, the parked ones as they were: partition, next offset,
// fired offset and the task's snapshot.
func (s *stateful) snapshotSplit() ([]byte, error) {
	all := maps.Clone(s.split.parked)
	for p, t := range s.split.tasks {
		st, err := t.snapshot()
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", p, err)
		}
		all[p] = component.Task{Next: t.next, Fired: t.fired, State: st}
	}
	b := append([]byte(nil), tasksMagic...)
	b = binary.AppendUvarint(b, uint64(len(all)))
	for _, p := range slices.Sorted(maps.Keys(all)) {
		t := all[p]
		b = binary.AppendVarint(b, int64(p))
		b = binary.AppendVarint(b, t.Next)
		b = binary.AppendVarint(b, t.Fired)
		b = binary.AppendUvarint(b, uint64(len(t.State)))
		b = append(b, t.State...)
	}
	return b, nil
}

func (k splittable) Tasks(snapshot []byte) (map[int32]component.Task, error) {
	return decodeTasks(snapshot)
}

func decodeTasks(b []byte) (map[int32]component.Task, error) {
	if !bytes.HasPrefix(b, []byte(tasksMagic)) {
		return nil, fmt.Errorf("%w: the checkpoint holds the state of a grouping run by one copy; to split it across copies, drain the pipeline and start with a new options.name", errTasksDamaged)
	}
	r := binread.Reader{B: b[len(tasksMagic):], Damaged: errTasksDamaged}
	n := r.Uvarint()
	out := map[int32]component.Task{}
	for i := uint64(0); i < n && r.Err == nil; i++ {
		p := int32(r.Varint())
		t := component.Task{Next: r.Varint(), Fired: r.Varint()}
		t.State = slices.Clone(r.Bytes())
		out[p] = t
	}
	if r.Err != nil || len(r.B) != 0 {
		return nil, errTasksDamaged
	}
	return out, nil
}

// restoreSplit parks every task of a snapshot: the group gives this copy its partitions
// afterwards (Adopt), or they start from here when nothing else owns them.
func (s *stateful) restoreSplit(b []byte) error {
	tasks, err := decodeTasks(b)
	if err != nil {
		return err
	}
	s.split.tasks, s.split.parked = map[int32]*task{}, tasks
	return nil
}

func (k splittable) Revoke(parts []int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range parts {
		t := k.split.tasks[p]
		if t == nil {
			continue
		}
		delete(k.split.tasks, p)
		st, err := t.snapshot()
		if err != nil {
			// The last commit holds the task: an unencodable state failed it already.
			continue
		}
		k.split.parked[p] = component.Task{Next: t.next, Fired: t.fired, State: st}
	}
}

func (k splittable) Adopt(part int32, t *component.Task) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.split.tasks, part)
	if t == nil {
		delete(k.split.parked, part)
		return nil
	}
	if err := k.newTask(time.Now()).restore(t.State, time.Now()); err != nil {
		return fmt.Errorf("%s: the state of partition %d: %w", k.what, part, err)
	}
	k.split.parked[part] = *t
	return nil
}
