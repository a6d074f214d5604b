package iceberg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
)

// A checkpoint's window state (Checkpoint.State) larger than stateInlineMax is written to a
// state file beside the table's data files and named in the snapshot summary, not put into
// it: every summary stays in the table's metadata.json, which each commit rewrites whole,
// so a state of megabytes inline made every commit write megabytes times the snapshots kept
// (docs/iceberg.md, "Window state").
const (
	stateInlineMax = 16 << 10
	keyStateFile   = "sluice.state-file"   // the state file's location
	keyStateSHA256 = "sluice.state-sha256" // its SHA-256, hex
	// StateInlineEnv names the environment variable of a test hook, read only by sluicetest
	// builds: the largest state kept inline, in bytes (0: every state goes to a file).
	StateInlineEnv = "SLUICE_TEST_ICEBERG_STATE_INLINE_MAX"
)

// stateFileMarker is what a commit with a state file keeps in keyState: an older sluice, which
// knows no state files, fails on it at restore ("the checkpoint's state ... is damaged")
// instead of resuming the offsets with empty windows. This sluice reads the file.
const stateFileMarker = "SLSF1: the window state is in the file sluice.state-file names; this sluice is too old to read it"

// stateRef names a state file written for a commit.
type stateRef struct{ path, sum string }

// put records the state of cp in a snapshot's properties: ref when the state went to a
// file, else inline (base64 JSON, as sluice always wrote it).
func (r *stateRef) put(p iceberg.Properties, cp component.Checkpoint) error {
	switch {
	case r != nil:
		p[keyStateFile], p[keyStateSHA256] = r.path, r.sum
		marker, err := json.Marshal([]byte(stateFileMarker))
		if err != nil {
			return err
		}
		p[keyState] = string(marker)
	case len(cp.State) > 0:
		state, err := json.Marshal(cp.State) // base64 text
		if err != nil {
			return fmt.Errorf("encode the window state of epoch %d: %w", cp.Epoch, err)
		}
		p[keyState] = string(state)
	}
	return nil
}

// writeStateFile writes the state of epoch for ts (writeState) and tracks the file, so that a
// later commit removes it once no checkpoint a restart reads names it.
func (s *sink) writeStateFile(ctx context.Context, ts *tableState, tbl *table.Table, epoch uint64, commitID string, state []byte) (*stateRef, error) {
	fsys, err := tbl.FS(ctx)
	if err == nil {
		var ref *stateRef
		if ref, err = writeState(tbl, fsys, epoch, commitID, state); err == nil {
			s.trackStateFile(ts, ref.path)
			return ref, nil
		}
	}
	return nil, fmt.Errorf("%s: table %s: %w", s.what, ts.name, diskError(err, s.catalogFile()))
}

// writeState writes state to a new file under the data location of tbl, before the commit
// that names it: a commit never names a file that is not there. A file whose commit never
// happens is an orphan, like the data files of that epoch.
func writeState(tbl *table.Table, fsys iceio.IO, epoch uint64, commitID string, state []byte) (*stateRef, error) {
	wfs, err := writable(fsys)
	if err != nil {
		return nil, err
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	path := loc.NewDataLocation(fmt.Sprintf("sluice-state-%d-%s.bin", epoch, commitID))
	if err := wfs.WriteFile(path, state); err != nil {
		return nil, fmt.Errorf("write the window state of epoch %d to %s: %w", epoch, path, err)
	}
	sum := sha256.Sum256(state)
	return &stateRef{path: path, sum: hex.EncodeToString(sum[:])}, nil
}

// loadState returns the window state st names: inline, or read from its state file and
// checked against the sum the summary holds.
func loadState(ctx context.Context, tbl *table.Table, st *stored) ([]byte, error) {
	if st.stateFile == "" {
		if st.stateInline == "" {
			return nil, nil
		}
		var state []byte
		if err := json.Unmarshal([]byte(st.stateInline), &state); err != nil {
			return nil, fmt.Errorf("snapshot %d: bad %s: %w", st.snapshotID, keyState, err)
		}
		return state, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(st.stateFile)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: read its window state: %w", st.snapshotID, err)
	}
	defer f.Close()
	state, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: read its window state %s: %w", st.snapshotID, st.stateFile, err)
	}
	if sum := sha256.Sum256(state); hex.EncodeToString(sum[:]) != st.stateSum {
		return nil, fmt.Errorf("snapshot %d: the window state file %s is damaged (its SHA-256 is not the %s the snapshot holds)",
			st.snapshotID, st.stateFile, keyStateSHA256)
	}
	return state, nil
}

// checkpointWithState is checkpointOf with the state loaded from tbl.
func checkpointWithState(ctx context.Context, tbl *table.Table, pipeline string, st *stored) (*component.Checkpoint, error) {
	cp := checkpointOf(pipeline, st)
	if cp == nil {
		return nil, nil
	}
	var err error
	cp.State, err = loadState(ctx, tbl, st)
	return cp, err
}

// stateFilesKept returns the state files named from the current snapshot of meta back to
// the oldest snapshot a restart reads (keepDepth, the same snapshots expiry keeps), or nil
// when the pipeline has no commit on the main branch.
func stateFilesKept(meta table.Metadata, pipeline string, routed bool) map[string]bool {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	depth := keepDepth(meta, cur.SnapshotID, pipeline, routed)
	if depth < 0 {
		return nil
	}
	kept := map[string]bool{}
	for i, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if i > depth {
			break
		}
		if snap.Summary != nil && snap.Summary.Properties[keyStateFile] != "" {
			kept[snap.Summary.Properties[keyStateFile]] = true
		}
	}
	return kept
}

// dropStateFiles runs after a commit of ts: it removes the state files this sink wrote or
// found at Open that no snapshot a restart reads names any more. The older snapshots that
// name them are never read for their state (Open reads the newest checkpoint). A failure is
// logged; the file stays, an orphan.
func (s *sink) dropStateFiles(ctx context.Context, ts *tableState, pipeline string) {
	s.mu.Lock()
	tbl, files := ts.tbl, ts.stateFiles
	s.mu.Unlock()
	if len(files) == 0 || tbl == nil {
		return
	}
	kept := stateFilesKept(tbl.Metadata(), pipeline, s.plan.route != nil)
	if kept == nil {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		slog.Warn("removing old window state files failed", "sink", s.what, "table", ts.name, "error", err)
		return
	}
	var left []string
	for _, f := range files {
		if kept[f] {
			left = append(left, f)
			continue
		}
		if err := fsys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			slog.Warn("removing an old window state file failed; it stays as an orphan", "sink", s.what, "table", ts.name, "file", f, "error", err)
		}
	}
	s.mu.Lock()
	ts.stateFiles = append(left, ts.stateFiles[len(files):]...)
	s.mu.Unlock()
}

// trackStateFile adds a state file of ts that dropStateFiles removes once no checkpoint a
// restart reads names it.
func (s *sink) trackStateFile(ts *tableState, path string) {
	if path == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(ts.stateFiles, path) {
		ts.stateFiles = append(ts.stateFiles, path)
	}
}

// openCheckpoint reads the table's newest checkpoint of the pipeline, with its state, and
// this copy's newest epoch (ts.last). Another copy's commit may remove the state file of the
// checkpoint read meanwhile (dropStateFiles): then the table is loaded again and its newer
// checkpoint read.
func (s *sink) openCheckpoint(ctx context.Context, cat catalog.Catalog, ts *tableState, info component.SinkInfo) (*component.Checkpoint, error) {
	for attempt := 0; ; attempt++ {
		meta := ts.tbl.Metadata()
		st, err := latest(meta, info.Pipeline)
		if err == nil {
			ts.last, err = lastEpoch(meta, info.Pipeline, info.Instance)
		}
		if err != nil {
			return nil, err
		}
		cp, err := checkpointWithState(ctx, ts.tbl, info.Pipeline, st)
		if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
			if ts.tbl, err = cat.LoadTable(ctx, ts.ident); err != nil {
				return nil, err
			}
			continue
		}
		if st != nil && err == nil {
			s.trackStateFile(ts, st.stateFile)
		}
		return cp, err
	}
}
