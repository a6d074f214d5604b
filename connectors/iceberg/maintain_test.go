package iceberg

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/connectortest"
)

// maintenanceCommits is how many epochs the maintenance tests commit; SLUICE_TEST_COMMITS
// raises it (docs/iceberg.md quotes a run with 500).
func maintenanceCommits(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("SLUICE_TEST_COMMITS")); err == nil && n > 0 {
		return n
	}
	return 120
}

// commitEpochs writes two rows per epoch and commits epochs first..first+n-1.
func commitEpochs(h harness, s *sink, first, n int) {
	h.t.Helper()
	for e := first; e < first+n; e++ {
		h.write(s, connectortest.Schema, 0, 2*e, 2*e+2, idRow)
		h.flush(s, uint64(e+1))
		h.driver().Commit(s, uint64(e+1), 2*e+2)
	}
}

// tableFiles counts the table's metadata files, manifest lists and manifests on disk, and
// the manifests of its current snapshot.
type tableFiles struct{ metadataJSON, manifestLists, manifests, current, snapshots int }

func countTableFiles(t *testing.T, w warehouse, tableName string) tableFiles {
	t.Helper()
	tbl := w.load(tableName)
	var c tableFiles
	dir := strings.TrimPrefix(tbl.Location(), "file://") + "/metadata"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".metadata.json"):
			c.metadataJSON++
		case strings.HasPrefix(name, "snap-"):
			c.manifestLists++
		case filepath.Ext(name) == ".avro":
			c.manifests++
		}
	}
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	c.current, c.snapshots = len(mans), len(tbl.Metadata().Snapshots())
	return c
}

// TestMaintenanceBounded: after many commits, the tables sluice creates keep at most
// write.metadata.previous-versions-max old metadata files and about
// commit.manifest.min-count-to-merge manifests per snapshot; with
// expire_snapshots_older_than the snapshots (and their manifest lists) stay few too, and the
// checkpoint survives. A table with the maintenance turned off grows with every commit.
func TestMaintenanceBounded(t *testing.T) {
	n := maintenanceCommits(t)
	cases := []struct {
		name  string
		extra []string
		check func(t *testing.T, c tableFiles)
	}{
		{"sluice defaults", []string{"table_properties: {write.metadata.previous-versions-max: '10', commit.manifest.min-count-to-merge: '20'}"},
			func(t *testing.T, c tableFiles) {
				if c.metadataJSON > 11 {
					t.Errorf("%d metadata files, want at most 11 (previous-versions-max 10)", c.metadataJSON)
				}
				if c.current > 20 {
					t.Errorf("the current snapshot has %d manifests, want at most 20 (min-count-to-merge)", c.current)
				}
			}},
		{"expiry", []string{"expire_snapshots_older_than: 1ms", "table_properties: {write.metadata.previous-versions-max: '10', commit.manifest.min-count-to-merge: '20'}"},
			func(t *testing.T, c tableFiles) {
				if c.snapshots > 2 || c.manifestLists > 2 {
					t.Errorf("%d snapshots and %d manifest lists, want at most 2 with expiry", c.snapshots, c.manifestLists)
				}
				// iceberg-go leaves the manifest of the new files behind when it merges it
				// into a bigger one: one unreferenced manifest per merge.
				if limit := c.current + n/20 + 2; c.manifests > limit {
					t.Errorf("%d manifests on disk, want the current ones and one per merge (at most %d)", c.manifests, limit)
				}
			}},
		{"maintenance off", []string{"table_properties: {write.metadata.delete-after-commit.enabled: 'false', commit.manifest-merge.enabled: 'false'}"},
			func(t *testing.T, c tableFiles) {
				if c.metadataJSON <= n || c.current != n {
					t.Errorf("%d metadata files and %d manifests: want one per commit without maintenance", c.metadataJSON, c.current)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWarehouse(t)
			h := harness{t: t, pipeline: "maint", lanes: 1}
			s := w.build(connectortest.Schema, "db.m", c.extra...)
			h.open(s, "")
			start := time.Now()
			commitEpochs(h, s, 0, n)
			took := time.Since(start)
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			files := countTableFiles(t, w, "db.m")
			t.Logf("%d commits in %v (%v each): %d metadata.json, %d manifest lists, %d manifests on disk; current snapshot: %d manifests; %d snapshots",
				n, took.Round(time.Millisecond), (took / time.Duration(n)).Round(time.Millisecond),
				files.metadataJSON, files.manifestLists, files.manifests, files.current, files.snapshots)
			c.check(t, files)
			if got := len(w.ids("db.m")); got != 2*n {
				t.Errorf("the table holds %d rows, want %d", got, 2*n)
			}
			s = w.build(connectortest.Schema, "db.m", c.extra...)
			if cp := h.open(s, ""); cp == nil || cp.Epoch != uint64(n) {
				t.Errorf("reopened at checkpoint %+v, want epoch %d", cp, n)
			}
			_ = s.Close(context.Background())
		})
	}
}

// TestExpiryKeepsCheckpoint: expiry never removes the newest snapshot carrying the pipeline's
// checkpoint, also when other writers committed after it.
func TestExpiryKeepsCheckpoint(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "keep", lanes: 1}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.k")
	h.open(s, "")
	defer s.Close(ctx)
	commitEpochs(h, s, 0, 5)
	cat := w.catalog()
	for i := range 3 {
		if err := appendOther(ctx, cat, "db.k", int64(1000+10*i), int64(1010+10*i)); err != nil {
			t.Fatal(err)
		}
	}
	ts := s.tables["db.k"]
	tbl, err := s.refresh(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.expire(ctx, ts, tbl, "keep", 0); err != nil {
		t.Fatal(err)
	}
	after := w.load("db.k").Metadata()
	if n := len(after.Snapshots()); n != 4 {
		t.Errorf("%d snapshots after expiry, want 4: the pipeline's newest and the 3 of the other writer after it", n)
	}
	if st, err := latest(after, "keep"); err != nil || st == nil || st.epoch != 5 {
		t.Fatalf("the checkpoint after expiry: %+v, %v; want epoch 5", st, err)
	}
	if got := len(w.ids("db.k")); got != 10+30 {
		t.Errorf("the table holds %d rows after expiry, want 40", got)
	}
}
