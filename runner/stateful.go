package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sluicehq/sluice/internal/binread"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// This file runs the stateful transforms (windowed Combine and GroupByKey, docs/windows.md):
// at a barrier every lane stops before flushing its sinks; the coordinator fires the
// transforms' closed windows through lane 0's stages, snapshots their state, and lets the
// lanes flush; the snapshot goes into every sink's checkpoint with the epoch.

// statefulState is what the run keeps for its stateful transforms.
type statefulState struct {
	nodes    []*Node                  // in the plan's order, so upstream ones fire first
	sources  map[*Node][]*sourceState // the sources upstream of each
	upstream map[*sinkState][]*Node   // the stateful transforms upstream of each sink
	reached  chan uint64              // lanes at a barrier, before flushing
	release  []chan struct{}          // per lane: flush now
}

func (r *run) wireStateful() {
	r.state.sources, r.state.upstream = map[*Node][]*sourceState{}, map[*sinkState][]*Node{}
	for _, n := range r.plan.Nodes {
		if _, ok := n.Impl.(component.Stateful); !ok {
			continue
		}
		r.state.nodes = append(r.state.nodes, n)
		for _, s := range r.sources {
			if r.reaches(s.node, n) {
				r.state.sources[n] = append(r.state.sources[n], s)
			}
		}
		for _, k := range r.sinks {
			if r.reaches(n, k.node) {
				r.state.upstream[k] = append(r.state.upstream[k], n)
			}
		}
	}
	if len(r.state.nodes) == 0 {
		return
	}
	r.state.reached = make(chan uint64, r.lanes)
	for range r.lanes {
		r.state.release = append(r.state.release, make(chan struct{}, 1))
	}
}

// waitForFiring holds lane l at the barrier until the coordinator has fired the stateful
// transforms.
func (r *run) waitForFiring(ctx context.Context, l int, epoch uint64) error {
	if len(r.state.nodes) == 0 {
		return nil
	}
	select {
	case r.state.reached <- epoch:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-r.state.release[l]:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fire runs once every lane reached the barrier: it fires the stateful transforms (every
// window when final), snapshots them and releases the lanes. It reports whether any result
// was emitted, and returns the snapshot for the checkpoints.
func (r *run) fire(ctx context.Context, final bool, next map[*sourceState]schemas.Offsets, emit map[*Node]component.Emit) (bool, []byte, error) {
	if len(r.state.nodes) == 0 {
		return false, nil, nil
	}
	for range r.lanes {
		select {
		case <-r.state.reached:
		case <-ctx.Done():
			return false, nil, ctx.Err()
		}
	}
	fired := false
	snaps := map[string][]byte{}
	for _, n := range r.state.nodes {
		st := n.Impl.(component.Stateful)
		upstream := schemas.Offsets{}
		for _, s := range r.state.sources[n] {
			upstream.Advance(next[s])
		}
		before := st.Fired()
		if err := st.Fire(ctx, upstream, final, emit[n]); err != nil {
			return false, nil, n.InStage(fmt.Errorf("firing windows: %w", err))
		}
		fired = fired || !before.Equal(st.Fired())
		snap, err := st.Snapshot()
		if err != nil {
			return false, nil, n.InStage(fmt.Errorf("snapshotting its state: %w", err))
		}
		snaps[n.Name] = snap
	}
	state := encodeStates(snaps)
	for l := range r.lanes {
		r.state.release[l] <- struct{}{}
	}
	return fired, state, nil
}

// firedOffsets returns the offsets of the results fired so far by the stateful transforms
// upstream of sink k, which its checkpoint covers.
func (r *run) firedOffsets(k *sinkState) schemas.Offsets {
	out := schemas.Offsets{}
	for _, n := range r.state.upstream[k] {
		out.Advance(n.Impl.(component.Stateful).Fired())
	}
	return out
}

// restoreState gives the stateful transforms the state of the sink with the oldest
// checkpoint, whose offsets the sources resume from.
func (r *run) restoreState() error {
	if len(r.state.nodes) == 0 {
		return nil
	}
	var oldest *component.Checkpoint
	for _, k := range r.sinks {
		if cp := k.restored; cp != nil && len(cp.State) > 0 && (oldest == nil || cp.Epoch < oldest.Epoch) {
			oldest = cp
		}
	}
	if oldest == nil {
		return nil
	}
	snaps, err := decodeStates(oldest.State)
	if err != nil {
		return fmt.Errorf("the checkpoint's state of the stateful transforms is damaged: %w", err)
	}
	for _, n := range r.state.nodes {
		if snap, ok := snaps[n.Name]; ok {
			if err := n.Impl.(component.Stateful).Restore(snap); err != nil {
				return n.InStage(err)
			}
		}
	}
	return nil
}

// statesMagic starts the binary form of Checkpoint.State: the transforms' snapshots one after
// another, each name and snapshot with its length (uvarints), names sorted. Checkpoints of
// sluice before it hold JSON of name -> base64 snapshot, which a "{" tells apart; the binary
// form copies each snapshot once and adds no third to its size.
const statesMagic = "SLST1"

// encodeStates returns the Checkpoint.State holding snaps.
func encodeStates(snaps map[string][]byte) []byte {
	n := len(statesMagic) + binary.MaxVarintLen64
	for name, snap := range snaps {
		n += 2*binary.MaxVarintLen64 + len(name) + len(snap)
	}
	b := append(make([]byte, 0, n), statesMagic...)
	b = binary.AppendUvarint(b, uint64(len(snaps)))
	for _, name := range slices.Sorted(maps.Keys(snaps)) {
		b = append(binary.AppendUvarint(b, uint64(len(name))), name...)
		b = append(binary.AppendUvarint(b, uint64(len(snaps[name]))), snaps[name]...)
	}
	return b
}

var errStatesDamaged = errors.New("the stateful transforms' snapshots do not decode")

// decodeStates reads what encodeStates wrote, or the JSON of older checkpoints. The snapshots
// share state's bytes.
func decodeStates(state []byte) (map[string][]byte, error) {
	if !bytes.HasPrefix(state, []byte(statesMagic)) {
		var snaps map[string][]byte
		if err := json.Unmarshal(state, &snaps); err != nil {
			return nil, err
		}
		return snaps, nil
	}
	r := binread.Reader{B: state[len(statesMagic):], Damaged: errStatesDamaged}
	n := r.Count()
	snaps := make(map[string][]byte, n)
	for i := 0; i < n && r.Err == nil; i++ {
		name := string(r.Bytes())
		snaps[name] = r.Bytes()
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Fail()
	}
	return snaps, r.Err
}
