package iceberg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// smallDisk mounts a tmpfs of the given size on a temporary directory, or skips the test
// where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file into dir until its disk is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			return
		}
	}
}

// TestDiskFull fills the disk of a SQLite catalog, then of a warehouse: the error says that
// the device is full and names the path, instead of SQLite's bare "disk I/O error (4874)".
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("commits are retried on a full disk for seconds")
	}
	for _, c := range []struct{ name, full string }{{"catalog", "catalog.db"}, {"warehouse", "wh"}} {
		t.Run(c.name, func(t *testing.T) {
			disk, other := smallDisk(t, "512k"), t.TempDir()
			at := map[bool]string{true: disk, false: other}
			cfg := fmt.Sprintf("type: WriteToIceberg\nconfig:\n  table: db.full\n  catalog_properties:\n    type: sql\n    uri: %s\n    warehouse: %s\n",
				filepath.Join(at[c.full == "catalog.db"], "catalog.db"), filepath.Join(at[c.full == "wh"], "wh"))
			b := componenttest.Env{File: testFile}.Build(t, "", cfg, connectortest.Schema)
			if err := b.Err(); err != nil {
				t.Fatal(err)
			}
			s := b.Component.(*sink)
			h := harness{t: t, pipeline: "full", lanes: 1}
			ctx := context.Background()
			defer s.Close(ctx)
			h.open(s, "")
			fill(t, disk)
			var err error
			big := strings.Repeat("x", 4096)
			for e := 1; e < 20 && err == nil; e++ {
				b := &schemas.Batch{Schema: connectortest.Schema}
				for i := range 20 {
					off := (e-1)*20 + i
					b.Rows = append(b.Rows, schemas.Row{int64(off), fmt.Sprintf("%d%s", off, big)})
					b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(off)})
				}
				if err = s.Writer(0).Write(ctx, b); err == nil {
					if err = s.Writer(0).Flush(ctx, uint64(e)); err == nil {
						err = s.Commit(ctx, h.driver().Checkpoint(uint64(e), e*20))
					}
				}
			}
			if err == nil {
				t.Fatal("the commits succeeded on a full disk")
			}
			t.Logf("error: %v", err)
			if want := filepath.Join(disk, c.full); !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say that the device of %s is full:\n%v", want, err)
			}
		})
	}
}

// TestDiskErrorWAL: SQLite reports a full disk under its WAL index as an I/O error,
// "disk I/O error (4874)"; it is put down to the full disk only when the disk is full.
func TestDiskErrorWAL(t *testing.T) {
	full, roomy := smallDisk(t, "64k"), t.TempDir()
	fill(t, full)
	walErr := errors.New("disk I/O error (4874)")
	for dir, want := range map[string]string{full: "no space left on device", roomy: "input/output error"} {
		db := filepath.Join(dir, "catalog.db")
		if got := diskError(walErr, db).Error(); got != "the catalog "+db+": "+want+": disk I/O error (4874)" {
			t.Errorf("on %s: %q", dir, got)
		}
	}
	if other := errors.New("no such table"); diskError(other, filepath.Join(full, "catalog.db")) != other {
		t.Error("an error that is not about the disk was changed")
	}
}
