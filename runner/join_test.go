package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/files"
	"github.com/sluicehq/sluice/runner"
)

// A windowed Join of two files killed mid-run (the context cancelled: nothing of the epoch
// in flight is committed) and stopped mid-window, again and again, gives every joined row
// once, as one uninterrupted run does: the open windows' records travel in the checkpoints,
// and a window committed before a stop does not fire again.
func TestJoinAcrossKillsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of runs killed and resumed")
	}
	const n = 15000 // click i at i s; a buy of i at i s for every third i; windows of 100 s
	pipeline := `
pipeline:
  transforms:
    - type: ReadFromJson
      name: clicks
      config:
        path: {dir}/clicks.jsonl
        schema: {type: object, properties: {id: {type: integer}}, required: [id]}
    - type: ReadFromJson
      name: buys
      config:
        path: {dir}/buys.jsonl
        schema: {type: object, properties: {item: {type: integer}, amount: {type: integer}}, required: [item, amount]}
    - type: AssignTimestamps
      name: clickTimes
      input: clicks
      config: {timestamp: id}
    - type: AssignTimestamps
      name: buyTimes
      input: buys
      config: {timestamp: item}
    - type: Join
      input: {c: clickTimes, b: buyTimes}
      windowing: {type: fixed, size: 100s}
      config:
        type: left
        equalities: [{c: id, b: item}]
        fields: {c: [id], b: [amount]}
    - type: WriteToJson
      input: Join
      config: {path: {dir}/out}
options:
  checkpoint_interval: 20ms
`
	setup := func() string {
		dir := t.TempDir()
		var clicks, buys strings.Builder
		for i := range n {
			fmt.Fprintf(&clicks, `{"id": %d}`+"\n", i)
			if i%3 == 0 {
				fmt.Fprintf(&buys, `{"item": %d, "amount": %d}`+"\n", i, 2*i)
			}
		}
		for name, text := range map[string]string{"clicks.jsonl": clicks.String(), "buys.jsonl": buys.String()} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return pipelineFile(t, dir, pipeline)
	}

	once := setup()
	if _, err := execute(t, once, runner.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	checkJoined(t, "one run", filepath.Join(filepath.Dir(once), "out"), n)

	path := setup()
	kills := 0
	for run := 0; ; run++ {
		if run > 40 {
			t.Fatal("no progress")
		}
		p, err := runner.Load(path) // a new process: nothing kept in memory
		if err != nil {
			t.Fatal(err)
		}
		if run%2 == 0 { // a kill after a few epochs: the epoch in flight is lost
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(30+run*7)*time.Millisecond)
			_, err := runner.Execute(ctx, p, runner.RunConfig{})
			cancel()
			if err == nil {
				break // it reached the end of input first
			}
			kills++
			continue
		}
		st, err := runner.Execute(context.Background(), p, runner.RunConfig{MaxRecords: 4000})
		if err != nil {
			t.Fatal(err)
		}
		if st.Read < 4000 {
			break
		}
	}
	if kills == 0 {
		t.Error("no run was killed before the end of its input: the kills test nothing")
	}
	t.Logf("%d kills", kills)
	checkJoined(t, "killed, stopped and resumed", filepath.Join(filepath.Dir(path), "out"), n)
}

// checkJoined reads the Join's output and requires every click once, with its buy's amount
// when it has one.
func checkJoined(t *testing.T, what, dir string, n int) {
	t.Helper()
	lines, err := files.ReadCommitted(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, l := range lines {
		var r struct {
			ID     int64
			Amount *int64
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		seen[r.ID]++
		switch {
		case r.ID%3 == 0 && (r.Amount == nil || *r.Amount != 2*r.ID):
			t.Errorf("%s: click %d joined %s, want amount %d", what, r.ID, l, 2*r.ID)
		case r.ID%3 != 0 && r.Amount != nil:
			t.Errorf("%s: click %d joined a buy: %s", what, r.ID, l)
		}
	}
	for id := range int64(n) {
		if seen[id] != 1 {
			t.Errorf("%s: click %d written %d times", what, id, seen[id])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}
