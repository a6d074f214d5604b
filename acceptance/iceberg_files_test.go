package acceptance

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestIcebergFileSizes: at a steady input, every epoch adds at most one data file per lane to
// an unpartitioned table (the files are as large as the epoch allows, not one per batch or
// per Kafka partition), and every record is in the table once. It logs the distribution of
// file sizes. docs/iceberg.md reports the same at a 60 s trigger.
func TestIcebergFileSizes(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const records, lanes, tableName = 120_000, 2, "db.events"
	addr := startDevKafka(t, "--topic", "ice_files:8").addr
	dir := t.TempDir()
	w := icebergWarehouse{dir: dir}
	produced := produceSteadily(t, addr, "ice_files", records, 6*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, kafkaToIceberg(addr, "ice_files", "ice_files", "exactly_once", w.sink(tableName, "2s"))+
		"  lanes: "+strconv.Itoa(lanes)+"\n")
	if res, err := exec.Command(binary, "run", pipeline, "--for", "9s").CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, res)
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	want := make([]int64, records)
	for i := range want {
		want[i] = int64(i)
	}
	checkDelivery(t, "exactly_once", want, w.ids(t, tableName))

	tbl, err := w.load(t, w.catalog(t), tableName)
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	for _, s := range tbl.Metadata().Snapshots() {
		added, _ := strconv.Atoi(s.Summary.Properties["added-data-files"])
		if added > lanes {
			t.Errorf("snapshot %d (epoch %s) added %d data files, want at most one per lane (%d)",
				s.SnapshotID, s.Summary.Properties["sluice.epoch"], added, lanes)
		}
		if added > 0 {
			commits++
		}
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	var total int64
	for _, task := range tasks {
		sizes = append(sizes, task.File.FileSizeBytes())
		total += task.File.FileSizeBytes()
	}
	slices.Sort(sizes)
	if len(sizes) == 0 {
		t.Fatal("no data files")
	}
	t.Logf("%d records in %d commits with data, %d files of %d KiB in all: min %d KiB, median %d KiB, max %d KiB",
		records, commits, len(sizes), total>>10, sizes[0]>>10, sizes[len(sizes)/2]>>10, sizes[len(sizes)-1]>>10)
}
