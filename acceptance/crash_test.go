package acceptance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/files"
)

// TestCrashFileToFile SIGKILLs a running file-to-file pipeline at random points, restarts it
// each time, and checks that the output holds every input record exactly once
// (exactly_once) or at least once (at_least_once).
func TestCrashFileToFile(t *testing.T) {
	skipIfShort(t)
	// Not in parallel with other tests: its runs are killed 5 to 300 ms after they start, which
	// a machine busy with other pipelines does not give them to reach a first commit.
	for _, delivery := range []string{"exactly_once", "at_least_once"} {
		t.Run(delivery, func(t *testing.T) { crashRun(t, delivery) })
	}
}

func crashRun(t *testing.T, delivery string) {
	const (
		nFiles    = 8
		perFile   = 100_000
		wantKills = 20
	)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	ids := writeInput(t, in, nFiles, perFile)
	pipeline := filepath.Join(dir, "crash.yaml")
	writeFile(t, pipeline, fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromJson
    config:
      path: %s
      schema:
        type: object
        properties:
          id: {type: integer}
          name: {type: string}
          amount: {type: number}
        required: [id, name, amount]
  transforms:
    - type: Filter
      config:
        keep: id %% 10 != 3
    - type: MapToFields
      config:
        append: true
        fields:
          doubled: amount * 2
  sink:
    type: WriteToJson
    config:
      path: %s
options:
  delivery: %s
  checkpoint_interval: 20ms
  lanes: 3
`, in, filepath.Join(dir, "out"), delivery))

	committed := func() int {
		lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return len(lines)
	}
	kills, finished := killer{pipeline: pipeline, minDelay: 5 * time.Millisecond, spread: 75 * time.Millisecond, progress: committed}.run(t, wantKills)
	if finished {
		t.Fatalf("the pipeline finished after %d kills; the test needs %d kills while it runs: give it more input", kills, wantKills)
	}
	before := committed()
	out, err := exec.Command(binary, "run", pipeline).CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}

	lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, l := range lines {
		var r struct {
			ID      int64   `json:"id"`
			Amount  float64 `json:"amount"`
			Doubled float64 `json:"doubled"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		if r.Doubled != r.Amount*2 {
			t.Fatalf("record %d: doubled = %v, want %v", r.ID, r.Doubled, r.Amount*2)
		}
		seen[r.ID]++
	}
	var want []int64
	unexpected := 0
	for _, id := range ids {
		if id%10 == 3 { // filtered out
			if seen[id] > 0 {
				unexpected++
			}
			continue
		}
		want = append(want, id)
	}
	if unexpected > 0 {
		t.Errorf("%d filtered records present", unexpected)
	}
	dups := checkDelivery(t, delivery, want, seen)
	t.Logf("%s: %d kills, %d input records, %d rows committed by the killed runs, %d output rows checked, %d duplicates",
		delivery, kills, len(ids), before, len(lines), dups)
}

// writeInput writes n files of perFile JSON records and returns their ids.
func writeInput(t *testing.T, dir string, n, perFile int) []int64 {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for f := range n {
		fh, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", f)))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(fh)
		for i := range perFile {
			id := int64(f*perFile + i)
			ids = append(ids, id)
			fmt.Fprintf(w, `{"id": %d, "name": "user-%d", "amount": %d.25}`+"\n", id, id%977, id%1000)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	return ids
}
