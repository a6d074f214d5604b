package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAsyncProgressBoundedReplay is issue 8's acceptance test: Kafka -> MapToFields -> Kafka
// with asynchronous progress, SIGKILLed 12 times while records arrive at a steady rate. Each
// kill lands once the run has caught up, at a random point of its progress cycle. Every input
// record must reach the output, and what the next run delivers again after a kill must be
// bounded by what arrived within one checkpointing interval, plus the epoch in flight when
// the last progress was cut.
func TestAsyncProgressBoundedReplay(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const (
		rate     = 4000 // records per second
		interval = 500 * time.Millisecond
		epoch    = 50 * time.Millisecond
		kills    = 12
	)
	addr := startDevKafka(t, "--topic", "in:4").addr
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, idsChain(addr, "in", "", fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: out
      format: JSON
`, addr), fmt.Sprintf("  name: replay\n  delivery: at_least_once\n  checkpoint_interval: %v\n"+
		"  async_progress_tracking: true\n  async_progress_checkpointing_interval: %v\n", epoch, interval)))

	stop := make(chan struct{})
	produced := produceAtRate(t, addr, "in", rate, stop)
	out := newTally(t, addr, "out")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	worst, lastDups := 0, 0
	for k := 0; k < kills; k++ {
		cmd := exec.Command(binary, "run", pipeline)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Caught up with what arrived while no run was there (well under a second) and past
		// its first progress write; then anywhere in the next two intervals.
		time.Sleep(1500*time.Millisecond + time.Duration(rng.Int64N(int64(2*interval))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		// The duplicates this run added are what it delivered again of the previous run's
		// output: the previous kill's replay. (The first run replays nothing.)
		dups := out.read().dups
		if k > 0 {
			worst = max(worst, dups-lastDups)
		}
		lastDups = dups
	}
	close(stop)
	total := int(<-produced)
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	final := out.read()
	worst = max(worst, final.dups-lastDups) // the last kill's replay, by the final run
	missing := 0
	for id := int64(0); id < int64(total); id++ {
		if final.seen[id] == 0 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d records missing", missing, total)
	}
	perInterval := int(rate * interval.Seconds())
	bound := int(rate * (interval + 4*epoch).Seconds())
	t.Logf("%d kills, %d records at %d/s, %d duplicates; worst replay after a kill %d records; one interval (%v) brings %d, the bound with the epoch in flight is %d",
		kills, total, rate, final.dups, worst, interval, perInterval, bound)
	if worst > bound {
		t.Errorf("a kill replayed %d records, more than the %d that arrive in one interval and the epochs in flight", worst, bound)
	}
}

// produceAtRate produces JSON records with ids 0, 1, ... to topic at rate records per second
// until stop is closed; it then flushes and yields how many it produced.
func produceAtRate(t *testing.T, addr, topic string, rate int, stop <-chan struct{}) <-chan int64 {
	cl := devClient(t, addr, kgo.ProducerLinger(2*time.Millisecond))
	done := make(chan int64, 1)
	var failed atomic.Pointer[error]
	go func() {
		const tick = 10 * time.Millisecond
		per := rate * int(tick) / int(time.Second)
		tk := time.NewTicker(tick)
		defer tk.Stop()
		var n int64
		for {
			select {
			case <-stop:
				if err := cl.Flush(context.Background()); err != nil {
					failed.Store(&err)
				}
				if err := failed.Load(); err != nil {
					t.Errorf("producing the input: %v", *err)
				}
				done <- n
				return
			case <-tk.C:
			}
			for range per {
				v := fmt.Sprintf(`{"id": %d, "name": "user-%d", "amount": %d.5}`, n, n%977, n%1000)
				cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.CompareAndSwap(nil, &err)
					}
				})
				n++
			}
		}
	}()
	return done
}

// tally reads a topic incrementally and counts each record's id.
type tally struct {
	t     *testing.T
	topic string
	cl    *kgo.Client
	adm   *kadm.Client
	at    map[int32]int64 // the next offset to read per partition
	seen  map[int64]int
	dups  int
}

func newTally(t *testing.T, addr, topic string) *tally {
	cl := devClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	return &tally{t: t, topic: topic, cl: cl, adm: kadm.NewClient(cl), at: map[int32]int64{}, seen: map[int64]int{}}
}

// read consumes up to the topic's current end and returns the tally.
func (y *tally) read() *tally {
	y.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends, err := y.adm.ListEndOffsets(ctx, y.topic)
	if err != nil {
		y.t.Fatalf("end offsets: %v", err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	reached := func() bool {
		for p, end := range want {
			if y.at[p] < end {
				return false
			}
		}
		return true
	}
	for !reached() {
		fs := y.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			y.t.Fatal("reading the output took over a minute")
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				y.t.Fatalf("output record %s: %v", r.Value, err)
			}
			if y.seen[v.ID]++; y.seen[v.ID] > 1 {
				y.dups++
			}
			y.at[r.Partition] = r.Offset + 1
		})
	}
	return y
}
