package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/component"
)

// Change is one difference between the shape a checkpoint was written with and a new spec's,
// and whether the new spec can resume from that checkpoint across it.
type Change struct {
	What       string
	Compatible bool
}

// CompareShapes lists the changes from old to cur that matter to a checkpoint of old. With
// state (the checkpoint holds window state), a stateful transform whose config or windowing
// changed, or that is gone, cannot take the state back.
func CompareShapes(old, cur *component.SpecShape, state bool) []Change {
	var out []Change
	add := func(ok bool, format string, args ...any) {
		out = append(out, Change{What: fmt.Sprintf(format, args...), Compatible: ok})
	}
	renamed := map[string]string{} // new name -> old name, for sinks renamed with the same identity
	for _, sink := range slices.Sorted(maps.Keys(old.Sinks)) {
		now, ok := cur.Sinks[sink]
		curName := sink
		if !ok {
			curName = renamedSink(old, cur, sink)
			if curName == "" {
				add(true, "sink %s is gone", sink)
				continue
			}
			renamed[curName] = sink
			now = cur.Sinks[curName]
			add(true, "sink %s is now named %s", sink, curName)
		}
		if lost, _ := facts(old.Sinks[sink], now); len(lost) > 0 {
			add(false, "sink %s wrote %s and now writes %s: its checkpoints stay with what it wrote", sink, list(old.Sinks[sink]), list(now))
		}
		oldIn, curIn := sourceFacts(old, sink), sourceFacts(cur, curName)
		lost, gained := facts(oldIn, curIn)
		if len(lost) > 0 {
			add(false, "sink %s read %s and now reads %s: its checkpoint's offsets are for what it read", sink, list(oldIn), list(curIn))
		} else if len(gained) > 0 {
			add(true, "sink %s also reads %s, from where a new source starts", sink, list(gained))
		}
	}
	for _, sink := range slices.Sorted(maps.Keys(cur.Sinks)) {
		if _, ok := old.Sinks[sink]; !ok && renamed[sink] == "" {
			add(true, "sink %s is new: it starts where the sinks that read its sources are, or where those sources start", sink)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old.Stateful)) {
		now, ok := cur.Stateful[name]
		switch {
		case !ok && state:
			add(false, "%s held window state and is gone", name)
		case !ok:
			add(true, "%s is gone", name)
		case !slices.Equal(old.Stateful[name], now) && state:
			add(false, "%s changed its key, aggregation or windowing while it holds window state", name)
		case !slices.Equal(old.Stateful[name], now):
			add(true, "%s changed (it held no state)", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cur.Stateful)) {
		if _, ok := old.Stateful[name]; !ok {
			add(true, "%s is new: it starts with no state", name)
		}
	}
	return out
}

// renamedSink returns the sink of cur, absent from old, that writes what old's sink wrote (a
// rename), or "".
func renamedSink(old, cur *component.SpecShape, sink string) string {
	for _, name := range slices.Sorted(maps.Keys(cur.Sinks)) {
		if _, existed := old.Sinks[name]; !existed && slices.Equal(cur.Sinks[name], old.Sinks[sink]) {
			return name
		}
	}
	return ""
}

// sourceFacts is the identity facts of the sources feeding sink, pooled and sorted.
func sourceFacts(sh *component.SpecShape, sink string) []string {
	var out []string
	for _, src := range sh.Feeds[sink] {
		out = append(out, sh.Sources[src]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// facts returns what old has and cur lacks, and what cur has and old lacks.
func facts(old, cur []string) (lost, gained []string) {
	for _, f := range old {
		if !slices.Contains(cur, f) {
			lost = append(lost, f)
		}
	}
	for _, f := range cur {
		if !slices.Contains(old, f) {
			gained = append(gained, f)
		}
	}
	return lost, gained
}

func list(fs []string) string {
	if len(fs) == 0 {
		return "nothing"
	}
	return strings.Join(fs, ", ")
}

// checkUpgrade compares the shape recorded in each sink's checkpoint with this run's spec. An
// incompatible change stops the run with the reasons and the ways out, unless
// RunConfig.AllowResetState: then the run goes on, and window state that no longer fits is
// dropped.
func (r *run) checkUpgrade() error {
	cur := r.lineage.Shape
	var problems []string
	dropState := false
	for _, k := range r.sinks {
		cp := k.restored
		if cp == nil || cp.Lineage == nil || cp.Lineage.Shape == nil {
			continue
		}
		if cp.Lineage.SpecHash == r.lineage.SpecHash {
			continue
		}
		for _, c := range CompareShapes(cp.Lineage.Shape, cur, len(cp.State) > 0) {
			if c.Compatible {
				r.log.Info("the spec changed since the checkpoint", "sink", k.node.Name, "change", c.What)
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: %s", k.node.Name, c.What))
			if len(cp.State) > 0 {
				dropState = true
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if !r.cfg.AllowResetState {
		return fmt.Errorf("the pipeline cannot resume from its checkpoints: the spec changed incompatibly since they were written:\n  %s\n"+
			"Either run the old spec to the end of its input first (sluice run OLD.yaml --stop-at-end), give the new spec another name (options.name, or --name) "+
			"(a new pipeline, which starts afresh), or run it with --allow-reset-state (sources resume from the checkpointed offsets they still match, "+
			"new ones start at their default position, and window state that no longer fits is dropped)",
			strings.Join(problems, "\n  "))
	}
	for _, p := range problems {
		r.log.Warn("resetting state across an incompatible change (--allow-reset-state)", "change", p)
	}
	if dropState {
		for _, k := range r.sinks {
			if k.restored != nil {
				k.restored.State = nil
			}
		}
	}
	return nil
}
