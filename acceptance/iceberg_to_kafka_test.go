package acceptance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrashIcebergToKafka streams an Iceberg table into Kafka with ReadFromIcebergCDC while
// other sluice processes append to the table every second, SIGKILLs the pipeline 12 times at
// random points, then drains it with --stop-at-end: a read_committed consumer of the output
// must see every row of the table exactly once.
func TestCrashIcebergToKafka(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const initial, appends, perAppend = 150_000, 6, 15_000
	addr := startDevKafka(t).addr
	dir := t.TempDir()
	catalog := fmt.Sprintf("catalog_properties: {type: sql, uri: %s, warehouse: %s}",
		filepath.Join(dir, "catalog.db"), filepath.Join(dir, "wh"))
	// seed writes rows [from, to) into the table with a pipeline of its own.
	seed := func(name string, from, to int) {
		t.Helper()
		var rows strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&rows, "{\"id\": %d, \"name\": \"user-%d\", \"amount\": %d.5}\n", i, i%977, i%1000)
		}
		writeFile(t, filepath.Join(dir, name+".jsonl"), rows.String())
		writeFile(t, filepath.Join(dir, name+".yaml"), fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromJson
    config:
      path: %s
      schema: {type: object, required: [id], properties: {id: {type: integer}, name: {type: string}, amount: {type: number}}}
  sink:
    type: WriteToIceberg
    config:
      table: db.events
      %s
options:
  name: %s
`, filepath.Join(dir, name+".jsonl"), catalog, name))
		// Each seed is a new pipeline onto a table that may hold rows: --allow-reset-state.
		if out, err := exec.Command(binary, "run", filepath.Join(dir, name+".yaml"), "--allow-reset-state").CombinedOutput(); err != nil {
			t.Errorf("seeding %s: %v\n%s", name, err, out)
		}
	}
	seed("seed0", 0, initial)

	out := fmt.Sprintf("iceberg_out_%d", time.Now().UnixNano())
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromIcebergCDC
    config:
      table: db.events
      %[3]s
      streaming: true
      starting_strategy: earliest
      poll_interval_seconds: 100ms
  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
          doubled: amount * 2
  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %[1]s
      topic: %[2]s
      format: JSON
options:
  name: iceberg_to_kafka
  checkpoint_interval: 50ms
`, addr, out, catalog))

	appended := make(chan struct{})
	go func() { // another writer appends to the table while the pipeline is killed
		defer close(appended)
		for k := 1; k <= appends; k++ {
			time.Sleep(time.Second)
			seed(fmt.Sprintf("seed%d", k), initial+(k-1)*perAppend, initial+k*perAppend)
		}
	}()
	var progress []int // rows delivered after each kill
	kills, finished := killer{pipeline: pipeline, minDelay: 10 * time.Millisecond, spread: 400 * time.Millisecond,
		progress: func() int { return len(countIDs(t, addr, out)) },
		onKill:   func(string) { progress = append(progress, len(countIDs(t, addr, out))) }}.run(t, 12)
	if finished {
		t.Fatalf("run %d ended by itself though it streams", kills+1)
	}
	before := countIDs(t, addr, out)
	<-appended
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen := countIDs(t, addr, out)
	want := make([]int64, initial+appends*perAppend)
	for i := range want {
		want[i] = int64(i)
	}
	dups := checkDelivery(t, "exactly_once", want, seen)
	t.Logf("%d kills, %d table rows, %d delivered by the killed runs (after each kill: %v), %d output records checked, %d duplicates",
		kills, len(want), len(before), progress, len(seen)+dups, dups)
}
