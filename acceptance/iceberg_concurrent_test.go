package acceptance

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestIcebergConcurrentWriter: while a sluice process writes a table from Kafka, another
// writer with a catalog handle of its own appends to the same table every few hundred
// milliseconds, as a compaction job would commit. sluice must neither fail nor duplicate:
// at the end the table holds every input record once and every row of the other writer once.
func TestIcebergConcurrentWriter(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const records, tableName = 100_000, "db.events"
	addr := startDevKafka(t, "--topic", "ice_conc:8").addr
	dir := t.TempDir()
	w := icebergWarehouse{dir: dir}
	produced := produceSteadily(t, addr, "ice_conc", records, 8*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, kafkaToIceberg(addr, "ice_conc", "ice_conc", "exactly_once", w.sink(tableName, "200ms")))

	run := exec.Command(binary, "run", pipeline)
	var stderr strings.Builder
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() { _ = run.Process.Kill() })

	cat := w.catalog(t)
	stop := make(chan struct{})
	var other []int64 // ids the other writer committed
	failed := 0       // its appends that lost a race
	var wg sync.WaitGroup
	wg.Go(func() {
		next := int64(1_000_000_000)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(200+rand.IntN(200)) * time.Millisecond):
			}
			if err := appendRows(cat, tableName, next, next+10); err != nil {
				failed++ // a conflict with sluice's commit (or no table yet): the next round tries again
				continue
			}
			for id := next; id < next+10; id++ {
				other = append(other, id)
			}
			next += 10
		}
	})

	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	time.Sleep(2 * time.Second) // sluice catches up while the other writer keeps committing
	if err := run.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("sluice beside another writer: %v\n%s", err, stderr.String())
	}
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}

	seen := w.ids(t, tableName)
	want := make([]int64, records)
	for i := range want {
		want[i] = int64(i)
	}
	want = append(want, other...)
	if n := checkDelivery(t, "exactly_once", want, seen); n > 0 || len(seen) != len(want) {
		t.Fatalf("the table holds %d distinct ids, want %d", len(seen), len(want))
	}
	tbl, err := w.load(t, cat, tableName)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := 0, 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties["sluice.pipeline"] != "" {
			ours++
		} else {
			theirs++
		}
	}
	if theirs < 10 {
		t.Errorf("the other writer committed only %d snapshots: the test did not run them side by side", theirs)
	}
	t.Logf("%d input records and %d rows of the other writer checked; snapshots: sluice %d, other writer %d (%d of its appends lost a race)",
		records, len(other), ours, theirs, failed)
}

// appendRows appends rows with ids [from, to) to the table through cat, as another program
// would: every other column holds a constant ("other" for strings, 0 for numbers).
func appendRows(cat catalog.Catalog, tableName string, from, to int64) error {
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, strings.Split(tableName, "."))
	if err != nil {
		return err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	for id := from; id < to; id++ {
		for i, f := range sc.Fields() {
			switch b := rb.Field(i).(type) {
			case *array.Int64Builder:
				if f.Name == "id" {
					b.Append(id)
				} else {
					b.Append(0)
				}
			case *array.StringBuilder:
				b.Append("other")
			case *array.Float64Builder:
				b.Append(0)
			default:
				b.AppendNull()
			}
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	_, err = tbl.AppendTable(ctx, at, 1024, nil)
	return err
}
