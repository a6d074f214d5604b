package acceptance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sinkbq "github.com/sluicehq/sluice/connectors/bigquery"
	sinkkafka "github.com/sluicehq/sluice/connectors/kafka"
	"github.com/sluicehq/sluice/internal/bqfake"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// bqServer is sluice's Storage Write API server on loopback, in the test process, with a
// dataset "ds" of project "sluice-test".
type bqServer struct{ *bqfake.Server }

const bqProject = "sluice-test"

func startBigQuery(t *testing.T) bqServer {
	t.Helper()
	srv, err := bqfake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.CreateDataset(bqProject, "ds"); err != nil {
		t.Fatal(err)
	}
	return bqServer{srv}
}

// sink is a WriteToBigQuery sink block for idsChain, writing ds.table and keeping its state in
// stateDir, or with stateDir "" in the Kafka source's checkpoint topic.
func (b bqServer) sink(table, stateDir, trigger string) string {
	block := fmt.Sprintf(`  sink:
    type: WriteToBigQuery
    config:
      table: %s:ds.%s
      endpoint: %s/bigquery/v2/
      storage_endpoint: %s
      triggering_frequency_seconds: %s
`, bqProject, table, b.HTTPURL(), b.GRPCAddr(), trigger)
	if stateDir != "" {
		block += "      checkpoint_dir: " + stateDir + "\n"
	}
	return block
}

// ids counts the committed rows of ds.table by id, checking the mapped field on the way.
func (b bqServer) ids(t *testing.T, table string) map[int64]int {
	t.Helper()
	rows, err := b.Rows(bqProject, "ds", table)
	if errors.Is(err, bqfake.ErrNotFound) {
		return map[int64]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int64]int, len(rows))
	for _, r := range rows {
		id, _ := r["id"].(int64)
		amount, _ := r["amount"].(float64)
		if doubled, _ := r["doubled"].(float64); doubled != 2*amount {
			t.Fatalf("row %v: doubled is not twice amount", r)
		}
		seen[id]++
	}
	return seen
}

func (b bqServer) count(table string) int {
	n, err := b.RowCount(bqProject, "ds", table)
	if err != nil {
		return 0
	}
	return int(n)
}

// TestCrashKafkaToBigQuery SIGKILLs a Kafka -> MapToFields -> WriteToBigQuery pipeline at
// least 15 times at random points while 300k records flow into its 8-partition input topic
// (`sluice dev kafka` in another process), then drains it with --stop-at-end: the table on the
// loopback Storage Write API server must hold every input record exactly once (exactly_once)
// or at least once (at_least_once). Every commit pauses at its steps
// (SLUICE_TEST_BIGQUERY_PAUSE), so that kills land between Finalize and the intent, between
// the intent and BatchCommitWriteStreams, and between that and the checkpoint (after which the
// source's offsets are committed). The exactly-once pipeline keeps its state where a Kafka
// source's pipeline does by default, in the checkpoint topic; the at-least-once one in a
// checkpoint_dir.
func TestCrashKafkaToBigQuery(t *testing.T) {
	skipIfShort(t)
	// Not in parallel with other tests: kills must land inside commits, which a busy machine
	// delays past the kills (TestCrashFileToFile).
	addr := startDevKafka(t, "--topic", "bq_exactly_once:8", "--topic", "bq_at_least_once:8").addr
	bq := startBigQuery(t)
	for _, delivery := range []string{"exactly_once", "at_least_once"} {
		t.Run(delivery, func(t *testing.T) { bigQueryCrashRun(t, addr, bq, delivery, 300_000) })
	}
}

func bigQueryCrashRun(t *testing.T, addr string, bq bqServer, delivery string, records int) {
	const wantKills = 15
	dir := t.TempDir()
	table := "events_" + delivery
	produced := produceSteadily(t, addr, "bq_"+delivery, records, 20*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	stateDir := filepath.Join(dir, "state")
	if delivery == "exactly_once" {
		stateDir = ""
	}
	writeFile(t, pipeline, idsChain(addr, "bq_"+delivery, "", bq.sink(table, stateDir, "200ms"),
		fmt.Sprintf("  name: bq_crash_%s\n  delivery: %s\n  checkpoint_interval: 200ms\n", delivery, delivery)))

	landed := map[string]int{}
	start := time.Now()
	kills, finished := killer{pipeline: pipeline, minDelay: 100 * time.Millisecond, spread: 900 * time.Millisecond,
		env:      []string{sinkbq.PauseEnv + "=60ms"},
		progress: func() int { return bq.count(table) },
		onKill:   func(stderr string) { landed[bigQueryKillPoint(stderr)]++ },
	}.run(t, wantKills)
	if finished {
		t.Fatalf("run %d ended by itself though its source has no end", kills+1)
	}
	killed := time.Since(start)
	before := bq.count(table)
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen := bq.ids(t, table)
	dups := checkAllIDs(t, delivery, records, seen)
	if stored := storedKeys(t, addr, "bq_crash_"+delivery+"/"); (stateDir == "") != (len(stored) > 0) {
		t.Errorf("with checkpoint_dir %q the checkpoint topic holds the states %v", stateDir, stored)
	}
	// sluice status finds the drained pipeline's checkpoint where the sink keeps it.
	out, err := exec.Command(binary, "status", "--json", pipeline).Output()
	var st statusJSON
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	if err != nil || len(st.Sinks) != 1 || !st.Sinks[0].Committed || st.Sinks[0].Lag == nil || *st.Sinks[0].Lag != 0 {
		t.Errorf("sluice status after the drain: %v\n%s", err, out)
	}
	if delivery == "exactly_once" && landed["after the intent, before the commit"]+landed["after the commit, before the checkpoint"] == 0 {
		t.Errorf("no kill landed in a commit (%v): the test did not test what it claims", landed)
	}
	t.Logf("%s: %d kills in %v (%v), %d input records, %d committed by the killed runs, %d rows checked, %d duplicates",
		delivery, kills, killed.Round(time.Second), landed, records, before, records+dups, dups)
}

// bigQueryKillPoint says where a run was killed, from the pause lines of the commit hook.
func bigQueryKillPoint(stderr string) string {
	i := strings.LastIndex(stderr, "bigquery-")
	switch {
	case i < 0:
		return "before any commit"
	case strings.HasPrefix(stderr[i:], "bigquery-pause finalized"):
		return "after finalize, before the intent"
	case strings.HasPrefix(stderr[i:], "bigquery-pause intent-saved"):
		return "after the intent, before the commit"
	case strings.HasPrefix(stderr[i:], "bigquery-pause committed"):
		return "after the commit, before the checkpoint"
	}
	return "between commits"
}

// storedKeys returns the keys in the checkpoint topic that begin with prefix.
func storedKeys(t *testing.T, addr, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(devClient(t, addr)).ListEndOffsets(ctx, sinkkafka.CheckpointTopic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(sinkkafka.CheckpointTopic, 0)
	cl := devClient(t, addr, kgo.ConsumeTopics(sinkkafka.CheckpointTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords())
	keys := map[string]bool{}
	for read := int64(0); read < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v", sinkkafka.CheckpointTopic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read = r.Offset + 1
			if strings.HasPrefix(string(r.Key), prefix) {
				keys[string(r.Key)] = true
			}
		})
	}
	return slices.Sorted(maps.Keys(keys))
}
