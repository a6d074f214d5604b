package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// The snapshot summary keys of a sluice commit (docs/iceberg.md). Every key is prefixed, so
// they never meet the keys of other writers.
const (
	keyPipeline = "sluice.pipeline"
	keyInstance = "sluice.instance"
	keyEpoch    = "sluice.epoch"
	keyOffsets  = "sluice.offsets" // JSON: source -> partition -> next offset, merged over instances
	keyCommit   = "sluice.commit"  // a random id per Commit call, to recognise it after a lost reply
	keyState    = "sluice.state"   // windowed operators' state, when small (statefile.go)
	// keyComplete marks, with routing, the last table committed for an epoch: every routed
	// table holds its rows of the epochs up to it.
	keyComplete = "sluice.complete"
	// keyOwn holds, with routing, the copy's own record (Commit.OwnRecord): per partition
	// the offset of the last complete epoch in which this copy moved it. keyOffsets holds the
	// table's own offsets there (what the table holds of each partition).
	keyOwn = "sluice.own"
	// The lineage of the commit (component.Lineage): which spec, sluice version and git
	// commit of the pipeline file wrote it, and the spec's shape for upgrade checks.
	keySpecHash  = "sluice.spec-hash"
	keyVersion   = "sluice.version"
	keyGitCommit = "sluice.git-commit"
	keyGitDirty  = "sluice.git-dirty"
	keyShape     = "sluice.shape"
)

// stored is one sluice commit found in a table's history.
type stored struct {
	snapshotID int64
	instance   string
	epoch      uint64
	commit     string
	offsets    schemas.Offsets
	own        schemas.Offsets // routing: the copy's own record (keyOwn), or offsets when absent
	// The window state, read only for a checkpoint that is restored (loadState): inline
	// (keyState, base64 JSON), or a state file and its SHA-256.
	stateInline         string
	stateFile, stateSum string
	complete            bool
	lineage             *component.Lineage
}

// summaryProps returns the snapshot properties that record cp, with the merged offsets.
// complete marks the epoch complete (routing: the last table committed for it). state names
// the file cp's state was written to; nil keeps the state inline.
func summaryProps(cp component.Checkpoint, instance, commitID string, merged schemas.Offsets, complete bool, state *stateRef) (iceberg.Properties, error) {
	offsets, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encode the offsets of epoch %d: %w", cp.Epoch, err)
	}
	p := iceberg.Properties{
		keyPipeline: cp.Pipeline,
		keyEpoch:    strconv.FormatUint(cp.Epoch, 10),
		keyOffsets:  string(offsets),
		keyCommit:   commitID,
	}
	if instance != "" {
		p[keyInstance] = instance
	}
	if complete {
		p[keyComplete] = "true"
	}
	if l := cp.Lineage; l != nil {
		if err := putLineage(p, l); err != nil {
			return nil, err
		}
	}
	if err := state.put(p, cp); err != nil {
		return nil, err
	}
	return p, nil
}

// history walks the table's main branch from its current snapshot back to the oldest
// ancestor and calls fn with each commit of pipeline, newest first, until fn returns false.
func history(meta table.Metadata, pipeline string, fn func(stored) bool) error {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if snap.Summary == nil || snap.Summary.Properties[keyPipeline] != pipeline {
			continue
		}
		st, err := parseStored(snap)
		if err != nil {
			return err
		}
		if !fn(st) {
			return nil
		}
	}
	return nil
}

func parseStored(snap table.Snapshot) (stored, error) {
	p := snap.Summary.Properties
	st := stored{snapshotID: snap.SnapshotID, instance: p[keyInstance], commit: p[keyCommit], complete: p[keyComplete] == "true"}
	var err error
	if st.epoch, err = strconv.ParseUint(p[keyEpoch], 10, 64); err != nil {
		return st, fmt.Errorf("snapshot %d: bad %s %q", snap.SnapshotID, keyEpoch, p[keyEpoch])
	}
	if err := json.Unmarshal([]byte(p[keyOffsets]), &st.offsets); err != nil {
		return st, fmt.Errorf("snapshot %d: bad %s: %w", snap.SnapshotID, keyOffsets, err)
	}
	st.own = st.offsets // a routed commit of an older sluice: one copy, the whole map
	if o := p[keyOwn]; o != "" {
		st.own = nil
		if err := json.Unmarshal([]byte(o), &st.own); err != nil {
			return st, fmt.Errorf("snapshot %d: bad %s: %w", snap.SnapshotID, keyOwn, err)
		}
	}
	st.stateInline, st.stateFile, st.stateSum = p[keyState], p[keyStateFile], p[keyStateSHA256]
	st.lineage = getLineage(p)
	return st, nil
}

// putOwn records a copy's own record (keyOwn).
func putOwn(p iceberg.Properties, own schemas.Offsets) error {
	b, err := json.Marshal(own)
	if err != nil {
		return fmt.Errorf("encode the copy's offsets: %w", err)
	}
	p[keyOwn] = string(b)
	return nil
}

// putLineage records l in a snapshot's properties.
func putLineage(p iceberg.Properties, l *component.Lineage) error {
	p[keySpecHash], p[keyVersion] = l.SpecHash, l.Version
	if l.GitCommit != "" {
		p[keyGitCommit], p[keyGitDirty] = l.GitCommit, strconv.FormatBool(l.GitDirty)
	}
	if l.Shape != nil {
		shape, err := json.Marshal(l.Shape)
		if err != nil {
			return fmt.Errorf("encode the spec's shape: %w", err)
		}
		p[keyShape] = string(shape)
	}
	return nil
}

// getLineage reads the lineage of a snapshot's properties; nil when it has none (a commit of
// an older sluice). A shape that does not decode is left out.
func getLineage(p iceberg.Properties) *component.Lineage {
	if p[keySpecHash] == "" {
		return nil
	}
	l := &component.Lineage{SpecHash: p[keySpecHash], Version: p[keyVersion], GitCommit: p[keyGitCommit], GitDirty: p[keyGitDirty] == "true"}
	if s := p[keyShape]; s != "" {
		var shape component.SpecShape
		if json.Unmarshal([]byte(s), &shape) == nil {
			l.Shape = &shape
		}
	}
	return l
}

// latest returns the newest commit of pipeline (whose offsets are the merged map of every
// instance), or nil.
func latest(meta table.Metadata, pipeline string) (*stored, error) {
	var found *stored
	err := history(meta, pipeline, func(st stored) bool { found = &st; return false })
	return found, err
}

// lastEpoch returns the newest epoch instance committed, or 0.
func lastEpoch(meta table.Metadata, pipeline, instance string) (uint64, error) {
	var epoch uint64
	err := history(meta, pipeline, func(st stored) bool {
		if st.instance == instance {
			epoch = st.epoch
			return false
		}
		return true
	})
	return epoch, err
}

// findCommit reports whether the commit with this id is in the history.
func findCommit(meta table.Metadata, pipeline, commitID string) (bool, error) {
	found := false
	err := history(meta, pipeline, func(st stored) bool {
		found = st.commit == commitID
		return !found
	})
	return found, err
}

// committedEpoch reports whether instance already committed epoch with offsets that cover
// cp's moved partitions (a Commit repeated after a crash).
func committedEpoch(meta table.Metadata, cp component.Commit, instance string) (bool, error) {
	found := false
	err := history(meta, cp.Pipeline, func(st stored) bool {
		if st.instance != instance || st.epoch < cp.Epoch {
			return st.instance != instance // older epochs of this instance: stop
		}
		if st.epoch == cp.Epoch {
			found = st.offsets.Includes(cp.Moved())
			return false
		}
		return true
	})
	return found, err
}

// checkpointOf turns a stored commit into the checkpoint Open and Reload return, without
// its state (checkpointWithState loads it).
func checkpointOf(pipeline string, st *stored) *component.Checkpoint {
	if st == nil {
		return nil
	}
	return &component.Checkpoint{Pipeline: pipeline, Epoch: st.epoch, Next: st.offsets.Clone(), Lineage: st.lineage}
}

// OffsetConflictError is the error of a commit whose partitions another copy of the pipeline
// committed since this copy's epoch began: the copy lost them, and must resume from the
// table. Nothing of the epoch was committed.
type OffsetConflictError struct {
	Table, Source string
	Partition     int32
	Epoch         uint64
	// Want is the offset the epoch started from (-1: none); Have the table's (-1: none).
	Want, Have int64
}

func (e *OffsetConflictError) Error() string {
	show := func(n int64) string {
		if n < 0 {
			return "none"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("table %s: epoch %d starts %s partition %d at offset %s, but the table has committed it up to %s: another copy of the pipeline took the partition; the epoch is not committed, and the next run resumes from the table",
		e.Table, e.Epoch, e.Source, e.Partition, show(e.Want), show(e.Have))
}

// casMerge checks cp against the table's stored offsets (compare-and-set): every partition cp
// moved must hold in the table what expect says (cp.From; with routing only the partitions
// of checked, against what the writers wrote under), and returns the offsets to store: the
// table's, with cp's moved partitions updated (never below what the table held). A checkpoint
// without From (a caller that does not track where epochs start) is not checked.
func casMerge(tableName string, have schemas.Offsets, cp component.Commit, expect, checked schemas.Offsets) (schemas.Offsets, error) {
	merged := have.Clone()
	for src, parts := range cp.Moved() {
		for p, next := range parts {
			_, check := checked.Get(src, p)
			if cp.From == nil || checked != nil && !check {
				cur, _ := have.Get(src, p)
				merged.Set(src, p, max(next, cur))
				continue
			}
			from, fromOK := expect.Get(src, p)
			cur, curOK := have.Get(src, p)
			if fromOK != curOK || from != cur {
				e := &OffsetConflictError{Table: tableName, Source: src, Partition: p, Epoch: cp.Epoch, Want: -1, Have: -1}
				if fromOK {
					e.Want = from
				}
				if curOK {
					e.Have = cur
				}
				return nil, e
			}
			merged.Set(src, p, max(from, next))
		}
	}
	return merged, nil
}

// Holds says which of the sink's tables hold rows, or "" when none does (component.Occupied;
// the runner asks only when no snapshot holds a checkpoint of the pipeline). It reads the
// tables as Open loaded them, so a copy that commits meanwhile is not taken for lost state.
func (s *sink) Holds(context.Context) (string, error) {
	s.mu.Lock()
	tables := s.tables
	s.mu.Unlock()
	var held []string
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		snap := tables[name].tbl.CurrentSnapshot()
		if snap == nil {
			continue
		}
		rows := "rows"
		if snap.Summary != nil {
			if n, ok := snap.Summary.Properties["total-records"]; ok {
				if n == "0" {
					continue
				}
				rows = n + " rows"
			}
		}
		held = append(held, fmt.Sprintf("table %s holds %s (snapshot %d)", name, rows, snap.SnapshotID))
	}
	if len(held) == 0 {
		return "", nil
	}
	return strings.Join(held, ", ") + ", and none of its snapshots holds a checkpoint of this pipeline", nil
}

// Claim does nothing (component.Occupied): rows become visible only in a snapshot that carries
// their checkpoint.
func (s *sink) Claim(context.Context, schemas.Offsets) error { return nil }
