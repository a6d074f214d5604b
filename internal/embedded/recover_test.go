package embedded

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A broker killed after writing a transactional batch to its segment and before writing the
// batch's index entry leaves a batch that kfake would load as not transactional: a
// read_committed reader would see records of a transaction that never committed. Start cuts
// such a batch (it was never acknowledged). The killed broker is a copy of a running broker's
// data directory (as `sluice status` takes), with the last index entry removed.
func TestStartCutsUnindexedBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three brokers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	live, err := Start(Config{DataDir: dir, Topics: map[string]int32{"out": 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(live.ListenAddrs()[0]), kgo.TransactionalID("cut"),
		kgo.DefaultProduceTopic("out"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	txn := func(value string, parts ...int32) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, part := range parts {
			if err := p.ProduceSync(ctx, &kgo.Record{Partition: part, Value: []byte(value)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	txn("committed", 0, 1)
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	txn("never committed", 1)

	killed, err := snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(killed)
	idx := filepath.Join(killed, "partitions", "out-1", "0.idx")
	info, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(idx, info.Size()-kfakeIndexEntry); err != nil {
		t.Fatal(err)
	}

	b, err := Start(Config{DataDir: killed})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Recovered == nil {
		t.Fatal("Start did not recover a data directory that no broker closed")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.ListenAddrs()[0]), kgo.ConsumeTopics("out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for idle := time.Now(); time.Since(idle) < time.Second && ctx.Err() == nil; {
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			idle = time.Now()
		})
		pcancel()
	}
	if want := []string{"committed", "committed"}; !slices.Equal(got, want) {
		t.Fatalf("a read_committed reader saw %q, want %q", got, want)
	}
}
