package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCrashKafkaToKafka SIGKILLs a Kafka -> MapToFields -> Kafka pipeline 20 times at random
// points while 200k records flow into its input topic, on a broker in another process
// (`sluice dev kafka`), then drains it with --stop-at-end; a read_committed consumer of the
// output must see every input record exactly once (exactly_once) or at least once
// (at_least_once).
//
// With SLUICE_TEST_KAFKA=host:port it runs against that broker instead (topics are created on
// first use there, with the broker's default partition count).
func TestCrashKafkaToKafka(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	addr := os.Getenv("SLUICE_TEST_KAFKA")
	if addr == "" {
		addr = startDevKafka(t, "--topic", "in_exactly_once:8", "--topic", "in_at_least_once:8").addr
	}
	for _, delivery := range []string{"exactly_once", "at_least_once"} {
		t.Run(delivery, func(t *testing.T) { t.Parallel(); kafkaCrashRun(t, addr, delivery, 200_000) })
	}
	// Asynchronous progress: TestAsyncProgressBoundedReplay.
}

// produceSteadily produces n JSON records to topic over about d, in small bursts, and
// returns a channel that yields the outcome when it is done.
func produceSteadily(t *testing.T, addr, topic string, n int, d time.Duration) <-chan error {
	cl := devClient(t, addr, kgo.ProducerLinger(5*time.Millisecond))
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const burst = 2000
		tick := time.NewTicker(d / time.Duration(n/burst))
		defer tick.Stop()
		failed := make(chan error, 1) // the first produce error
		for i := 0; i < n; i++ {
			if i%burst == 0 {
				<-tick.C
			}
			v := fmt.Sprintf(`{"id": %d, "name": "user-%d", "amount": %d.5}`, i, i%977, i%1000)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case failed <- err:
					default:
					}
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			done <- err
			return
		}
		select {
		case err := <-failed:
			done <- err
		default:
			done <- nil
		}
	}()
	return done
}

func kafkaCrashRun(t *testing.T, addr, delivery string, records int) {
	const wantKills = 20
	dir := t.TempDir()
	run := fmt.Sprintf("%s_%d", delivery, time.Now().UnixNano()) // fresh topics on a shared broker
	in, out := "in_"+delivery, "out_"+run
	if os.Getenv("SLUICE_TEST_KAFKA") != "" {
		in = "in_" + run
	}
	produced := produceSteadily(t, addr, in, records, 8*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, idsChain(addr, in, "", fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
`, addr, out), fmt.Sprintf("  name: crash_%s\n  delivery: %s\n  checkpoint_interval: 50ms\n", run, delivery)))

	// The duplicates the output gains from one kill to the next: what the killed run delivered
	// again of what an earlier one had delivered.
	lastDups, worstReplay := 0, 0
	afterKill := func(string) {
		dups := duplicates(countIDs(t, addr, out))
		worstReplay = max(worstReplay, dups-lastDups)
		lastDups = dups
	}
	kills, finished := killer{pipeline: pipeline, minDelay: 50 * time.Millisecond, spread: 400 * time.Millisecond,
		progress: func() int { return len(countIDs(t, addr, out)) }, onKill: afterKill}.run(t, wantKills)
	if finished {
		t.Fatalf("run %d ended by itself though its source has no end", kills+1)
	}
	before := countIDs(t, addr, out)
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	seen := countIDs(t, addr, out)
	want := make([]int64, records)
	for i := range want {
		want[i] = int64(i)
	}
	dups := checkDelivery(t, delivery, want, seen)
	t.Logf("%s: %d kills, %d input records, %d committed by the killed runs, %d output records checked, %d duplicates, at most %d delivered again by one run",
		delivery, kills, records, len(before), len(seen)+dups, dups, worstReplay)
	// A run delivers again at most what it processed since the last progress written: one
	// epoch, though an epoch of a run catching up at full speed may be large.
	if delivery == "at_least_once" && worstReplay >= records/2 {
		t.Errorf("one run delivered %d records again: the replay is not bounded by the progress written", worstReplay)
	}
}

// duplicates counts the records beyond the first of each id.
func duplicates(seen map[int64]int) int {
	n := 0
	for _, c := range seen {
		n += c - 1
	}
	return n
}

// idsChain is the pipeline the Kafka tests run over the records of produceSteadily:
// ReadFromKafka (topic at addr, with the consumer_config lines given, indented by 8) ->
// MapToFields (doubled = amount * 2) -> sink (a block indented by 2), with the options lines.
func idsChain(addr, topic, consumerConfig, sink, options string) string {
	if consumerConfig != "" {
		consumerConfig = "      consumer_config:\n" + consumerConfig
	}
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
%s      schema:
        type: object
        properties:
          id: {type: integer}
          name: {type: string}
          amount: {type: number}
  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
          doubled: amount * 2
%soptions:
%s`, addr, topic, consumerConfig, sink, options)
}

// countIDs reads topic from the start with read_committed (readCommittedTo), and counts each
// record's id (checking the mapped field on the way).
func countIDs(t *testing.T, addr, topic string) map[int64]int {
	t.Helper()
	seen := map[int64]int{}
	readCommittedTo(t, addr, topic, func(r *kgo.Record) {
		var v struct {
			ID      int64   `json:"id"`
			Amount  float64 `json:"amount"`
			Doubled float64 `json:"doubled"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Doubled != 2*v.Amount {
			t.Fatalf("output record %s: %v", r.Value, err)
		}
		seen[v.ID]++
	})
	return seen
}
