package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// flowTest is a ReadFromKafka -> WriteToKafka pipeline driven through the connector API the
// way the runner drives it: the source's batches are decoded and written by the lane of their
// partition, every few batches an epoch ends (every lane flushes, the sink commits the
// source's offsets), and after a failure the whole flow starts again from the sink's
// checkpoint, as a restarted process would. It is deterministic: one goroutine, count-based
// epochs.
type flowTest struct {
	t         *testing.T
	addr      string
	in, out   string
	pipeline  string
	delivery  component.Delivery
	lanes     int
	perEpoch  int // batches per epoch
	restarts  int // runs that failed and were started again
	lastError error
}

const flowRecords = 600

func newFlowTest(t *testing.T, addr string, delivery component.Delivery) *flowTest {
	f := &flowTest{t: t, addr: addr, delivery: delivery, lanes: 2, perEpoch: 4,
		in: fmt.Sprintf("faults-in-%d", topicSeq.Add(1)), out: fmt.Sprintf("faults-out-%d", topicSeq.Add(1)),
		pipeline: fmt.Sprintf("faults-%s-%d", runID, topicSeq.Add(1))}
	adm := kadm.NewClient(testClientAt(t, addr))
	for _, topic := range []string{f.in, f.out} {
		if _, err := adm.CreateTopic(context.Background(), 3, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	cl := testClientAt(t, addr, kgo.DefaultProduceTopic(f.in))
	var recs []*kgo.Record
	for i := range flowRecords {
		recs = append(recs, &kgo.Record{Partition: int32(i % 3), Value: fmt.Appendf(nil, "r%04d", i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return f
}

// run runs the flow to the end of the input, starting again after failures (at most 5 times).
func (f *flowTest) run() {
	f.t.Helper()
	for attempt := 0; ; attempt++ {
		err := f.runOnce()
		if err == nil {
			return
		}
		f.lastError = err
		if attempt == 5 {
			f.t.Fatalf("the flow failed %d times; last: %v", attempt+1, err)
		}
		f.restarts++
	}
}

func (f *flowTest) runOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := buildFor(f.t, f.delivery, "type: WriteToKafka\nconfig:\n"+configAt(f.addr, f.out, "format: RAW"), stringSchema)
	if err := b.Err(); err != nil {
		f.t.Fatal(err)
	}
	snk := b.Component.(*sink)
	cp, err := snk.Open(ctx, component.SinkInfo{Pipeline: f.pipeline, Lanes: f.lanes})
	if err != nil {
		return err
	}
	defer snk.Close(ctx)
	var from schemas.Offsets
	var epoch uint64
	if cp != nil {
		from, epoch = cp.Next, cp.Epoch
	}
	b = env.Build(f.t, "", "type: ReadFromKafka\nconfig:\n"+configAt(f.addr, f.in, "format: STRING", "auto_offset_reset_config: earliest",
		"consumer_config: {max.poll.records: 50}"))
	if err := b.Err(); err != nil {
		f.t.Fatal(err)
	}
	src := b.Component.(*source)
	src.StopAtEnd()
	if err := src.Open(ctx, from); err != nil {
		return err
	}
	defer src.Close()
	batches := 0
	endEpoch := func() error {
		epoch++
		next := src.Offsets()
		for lane := range f.lanes {
			if err := snk.Writer(lane).Flush(ctx, epoch); err != nil {
				return err
			}
		}
		return snk.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: f.pipeline, Epoch: epoch, Next: next}})
	}
	for {
		batch, err := src.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		lane := int(batch.Pos[0].Partition) % f.lanes
		err = src.Decode(ctx, batch, func(tag string, out *schemas.Batch) error {
			if tag != component.Main {
				return fmt.Errorf("a record went to %s", tag)
			}
			return snk.Writer(lane).Write(ctx, uncovered(out, from))
		})
		if err != nil {
			return err
		}
		if batches++; batches%f.perEpoch == 0 {
			if err := endEpoch(); err != nil {
				return err
			}
		}
	}
	if batches%f.perEpoch != 0 {
		return endEpoch()
	}
	return nil
}

// uncovered drops the rows a restored checkpoint already covers, as the runner does before a
// sink's Write.
func uncovered(b *schemas.Batch, covered schemas.Offsets) *schemas.Batch {
	out := &schemas.Batch{Schema: b.Schema}
	for i, row := range b.Rows {
		if !covered.Covers(b.Pos[i]) {
			out.Rows, out.Pos = append(out.Rows, row), append(out.Pos, b.Pos[i])
		}
	}
	return out
}

// check reads the output as a read_committed consumer: every input record must be there, and
// with once set, once. It returns how many records a read_uncommitted consumer sees.
func (f *flowTest) check(once bool) int {
	f.t.Helper()
	got := all(readTopicAt(f.t, f.addr, f.out, true))
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	missing, twice := 0, 0
	for i := range flowRecords {
		switch n := seen[fmt.Sprintf("r%04d", i)]; {
		case n == 0:
			missing++
		case n > 1:
			twice++
		}
	}
	if missing > 0 || len(seen) != flowRecords {
		f.t.Errorf("%d of %d records missing from the output (%d distinct values)", missing, flowRecords, len(seen))
	}
	if once && (twice > 0 || len(got) != flowRecords) {
		f.t.Errorf("%d records in the output, %d of them more than once; want each once", len(got), twice)
	}
	return len(all(readTopicAt(f.t, f.addr, f.out, false)))
}

// Broker faults while ReadFromKafka -> WriteToKafka runs: retriable errors and dropped
// connections are retried by the clients, a failed transaction makes the flow start again
// from the last checkpoint; nothing is lost, and with exactly_once nothing is duplicated. The
// faults are count-based (the first N matching requests), so the test is deterministic.
func TestBrokerFaults(t *testing.T) {
	cluster, addr := newCluster(t)
	type scenario struct {
		name string
		// inject installs the faults for a flow and returns what counts the requests they
		// hit, how many that must be after the run, and whether the flow must have started
		// again.
		inject  func(f *flowTest) (hits func() int, want int, restart bool)
		onlyEOS bool // the faults are of transactions
		// mayRestart: the flow may also start again. A produce request lost with its
		// connection while the next one was already sent reaches the broker out of order
		// (OUT_OF_ORDER_SEQUENCE_NUMBER), which ends the transaction: the epoch is aborted
		// and replayed, and nothing is lost or duplicated either way.
		mayRestart bool
	}
	fault := func(fs ...kfake.Fault) func() int { return cluster.Fault(fs...).Hits }
	drop := func(key kmsg.Key, n int64) func() int {
		var dropped atomic.Int64
		cluster.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
			if dropped.Add(1) > n {
				cluster.DropControl()
				return nil, nil, false
			}
			cluster.KeepControl()
			return nil, errors.New("injected: connection dropped"), true
		})
		return func() int { return int(min(dropped.Load(), n)) }
	}
	scenarios := []scenario{
		{name: "produce retriable", inject: func(f *flowTest) (func() int, int, bool) {
			return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: f.out, Err: kerr.NotLeaderForPartition, Count: 4}), 4, false
		}},
		{name: "produce timed out after append", inject: func(f *flowTest) (func() int, int, bool) {
			// The broker appends, then answers REQUEST_TIMED_OUT: the retry must not
			// write the batch twice (idempotent producer).
			return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: f.out, Err: kerr.RequestTimedOut, Count: 3}), 3, false
		}},
		{name: "fetch retriable", inject: func(f *flowTest) (func() int, int, bool) {
			return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: f.in, Err: kerr.NotLeaderForPartition, Count: 2}), 2, false
		}},
		{name: "dropped connections", mayRestart: true, inject: func(f *flowTest) (func() int, int, bool) {
			p, q := drop(kmsg.Produce, 2), drop(kmsg.Fetch, 2)
			return func() int { return p() + q() }, 4, false
		}},
		{name: "transaction coordinator busy", onlyEOS: true, inject: func(f *flowTest) (func() int, int, bool) {
			return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.ConcurrentTransactions, Count: 2, TopLevel: true},
				kfake.Fault{Keys: []kmsg.Key{kmsg.InitProducerID}, Err: kerr.ConcurrentTransactions, Count: 2, TopLevel: true}), 4, false
		}},
		{name: "failed commit", inject: func(f *flowTest) (func() int, int, bool) {
			if f.delivery == component.ExactlyOnce {
				// The third commit fails: its epoch is aborted and runs again.
				return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.UnknownServerError, TopLevel: true,
					When: nthCommit(3)}), 1, true
			}
			return fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: CheckpointTopic, Err: kerr.UnknownServerError,
				When: nthRequest(3)}), 1, true
		}},
	}
	for _, delivery := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		for _, s := range scenarios {
			if s.onlyEOS && delivery != component.ExactlyOnce {
				continue
			}
			t.Run(string(delivery)+"/"+s.name, func(t *testing.T) {
				f := newFlowTest(t, addr, delivery)
				hits, want, restart := s.inject(f)
				f.run()
				if got := hits(); got != want {
					t.Errorf("the faults hit %d requests, want %d", got, want)
				}
				if restart != (f.restarts > 0) && !(s.mayRestart && f.restarts > 0) {
					t.Errorf("the flow started again %d times (last error: %v); want a restart: %v", f.restarts, f.lastError, restart)
				}
				if f.lastError != nil {
					t.Logf("the flow started again after: %v", f.lastError)
				}
				restart = f.restarts > 0
				// Without a restart the idempotent producer writes each record once
				// whatever the delivery; after one, exactly_once still does.
				raw := f.check(!restart || delivery == component.ExactlyOnce)
				if restart && raw <= flowRecords {
					// The failed epoch was written and then replayed: an aborted
					// transaction, or duplicates at_least_once allows.
					t.Errorf("a read_uncommitted consumer sees %d records, want the failed epoch's too", raw)
				}
			})
		}
	}
}

// nthCommit matches the nth EndTxn request that commits.
func nthCommit(n int64) func(kmsg.Request) bool {
	var seen atomic.Int64
	return func(r kmsg.Request) bool {
		return r.(*kmsg.EndTxnRequest).Commit && seen.Add(1) == n
	}
}

// nthRequest matches the nth request the fault's selectors match.
func nthRequest(n int64) func(kmsg.Request) bool {
	var seen atomic.Int64
	return func(kmsg.Request) bool { return seen.Add(1) == n }
}
