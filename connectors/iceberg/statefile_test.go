package iceberg

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// stateFiles lists the window state files in the table's directory tree.
func stateFiles(t *testing.T, w warehouse) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(w.dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "sluice-state-") {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stateTable opens a sink on a new table and flushes epoch 1, whose checkpoint (returned, not
// committed) carries state.
func stateTable(t *testing.T, state []byte) (warehouse, harness, *sink, component.Commit) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "statefile", lanes: 1}
	s := w.build(connectortest.Schema, "db.st")
	h.open(s, "")
	h.flush(s, 1)
	cp := h.driver().Checkpoint(1, 5)
	cp.State = state
	return w, h, s, cp
}

// commitState writes and commits epoch e (ids e*10 to e*10+9) with state.
func commitState(h harness, s *sink, e int, state []byte) {
	h.t.Helper()
	h.write(s, connectortest.Schema, 0, e*10, e*10+10, idRow)
	h.flush(s, uint64(e))
	cp := h.driver().Checkpoint(uint64(e), e*10+10)
	cp.State = state
	if err := s.Commit(context.Background(), cp); err != nil {
		h.t.Fatalf("commit epoch %d: %v", e, err)
	}
}

// A large window state goes to a state file named in the snapshot summary, not into the
// summary (which stays in metadata.json); a reopened sink restores it; once a newer
// checkpoint names a newer file the old one is removed; a small state stays inline.
func TestWindowStateFile(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "statefile", lanes: 1}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.st")
	h.open(s, "")
	big := func(e int) []byte { return bytes.Repeat([]byte{byte(e)}, stateInlineMax+1) }
	commit := func(s *sink, e int, state []byte) { commitState(h, s, e, state) }
	commit(s, 1, big(1))
	props := w.load("db.st").CurrentSnapshot().Summary.Properties
	var marker []byte
	if json.Unmarshal([]byte(props[keyState]), &marker) != nil || string(marker) != stateFileMarker || props[keyStateFile] == "" || props[keyStateSHA256] == "" {
		t.Fatalf("summary of a large state: %v, want %s and %s, and in %s only the marker for older sluice", props, keyStateFile, keyStateSHA256, keyState)
	}
	first := stateFiles(t, w)
	if len(first) != 1 {
		t.Fatalf("state files %v, want one", first)
	}
	commit(s, 2, big(2))
	if files := stateFiles(t, w); len(files) != 1 || files[0] == first[0] {
		t.Fatalf("state files after a second checkpoint: %v, want only the new one (the first was %s)", files, first[0])
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s = w.build(connectortest.Schema, "db.st")
	cp := h.open(s, "")
	if cp == nil || cp.Epoch != 2 || !bytes.Equal(cp.State, big(2)) {
		t.Fatalf("reopened checkpoint: epoch %v, %d bytes of state; want epoch 2 and its state", cp.Epoch, len(cp.State))
	}
	// The first commit after a restart removes the file of the checkpoint it restored.
	commit(s, 3, []byte("small"))
	props = w.load("db.st").CurrentSnapshot().Summary.Properties
	if files := stateFiles(t, w); len(files) != 0 || props[keyStateFile] != "" {
		t.Fatalf("after a small state: files %v, %s %q; want none", files, keyStateFile, props[keyStateFile])
	}
	var inline []byte
	if err := json.Unmarshal([]byte(props[keyState]), &inline); err != nil || string(inline) != "small" {
		t.Fatalf("inline state %q (%v), want small", props[keyState], err)
	}
	if cp, err := s.Reload(ctx); err != nil || string(cp.State) != "small" {
		t.Fatalf("reload: %+v, %v", cp, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A state file that is not what its snapshot says (damaged, or cut short) stops Open with an
// error naming it, rather than restoring wrong state.
func TestWindowStateFileDamaged(t *testing.T) {
	w, h, s, cp := stateTable(t, bytes.Repeat([]byte("s"), stateInlineMax+1))
	ctx := context.Background()
	if err := s.Commit(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	files := stateFiles(t, w)
	if len(files) != 1 {
		t.Fatalf("state files %v, want one", files)
	}
	if err := os.WriteFile(files[0], []byte("cut"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = w.build(connectortest.Schema, "db.st")
	_, err := s.Open(ctx, h.info(""))
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), filepath.Base(files[0])) {
		t.Fatalf("open with a damaged state file: %v, want an error naming it", err)
	}
}

// A table an older sluice committed to, with the state inline in the summary (sluice.state),
// restores it.
func TestWindowStateInlineOfOlderSluice(t *testing.T) {
	state := bytes.Repeat([]byte("old"), stateInlineMax) // larger than sluice now keeps inline
	w, h, s, cp := stateTable(t, state)
	ctx := context.Background()
	// What an older sluice wrote: the state inline, whatever its size.
	props, err := summaryProps(cp.Checkpoint, "", "old-commit", cp.Next, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl := w.load("db.st")
	txn := tbl.NewTransaction()
	if err := txn.AddFiles(ctx, nil, props, false); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = w.build(connectortest.Schema, "db.st")
	got := h.open(s, "")
	defer s.Close(ctx)
	if got == nil || !bytes.Equal(got.State, state) {
		t.Fatalf("restored %v", got)
	}
}

// A compaction carries the newest checkpoint's state file forward and an expiry of every
// older snapshot keeps it: the reopened sink restores it, and its next commit removes it.
func TestWindowStateFileCompactAndExpire(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "statefile", lanes: 1}
	ctx := context.Background()
	big := func(e int) []byte { return bytes.Repeat([]byte{byte(e)}, stateInlineMax+1) }
	commit := func(s *sink, e int) { commitState(h, s, e, big(e)) }
	s := w.build(connectortest.Schema, "db.st")
	h.open(s, "")
	for e := 1; e <= 4; e++ {
		commit(s, e)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog("", w.props())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := cat.Compact(ctx, "db.st", 1, 3); err != nil || st.DataFilesAfter != 1 {
		t.Fatalf("compact: %+v, %v", st, err)
	}
	if ex, err := cat.Expire(ctx, "db.st", time.Nanosecond); err != nil || ex.After != 1 {
		t.Fatalf("expire: %+v, %v; want only the compaction left", ex, err)
	}
	kept := stateFiles(t, w)
	if len(kept) != 1 {
		t.Fatalf("state files after compaction and expiry: %v, want the newest checkpoint's", kept)
	}
	s = w.build(connectortest.Schema, "db.st")
	cp := h.open(s, "")
	if cp == nil || cp.Epoch != 4 || !bytes.Equal(cp.State, big(4)) {
		t.Fatalf("reopened after compaction and expiry: %+v", cp)
	}
	commit(s, 5)
	if files := stateFiles(t, w); len(files) != 1 || files[0] == kept[0] {
		t.Fatalf("state files after the next commit: %v, want one other than %s", files, kept[0])
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
