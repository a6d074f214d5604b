package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A `sluice dev kafka --data-dir` broker SIGKILLed while a transaction is open, restarted on
// its directory: the restarted producer (same transactional id) commits more, and a
// read_committed reader sees every record of every committed transaction and none of the open
// one. kfake drops the open transaction at replay without an abort marker, and read_committed
// clients then skip the producer's later committed batches (docs/kafka.md, "The dev broker
// after a crash"); before the recovery a reader saw only the first transactions.
func TestDevKafkaCrashOpenTransaction(t *testing.T) {
	t.Parallel()
	ctx, dir, b := crashTest(t)

	p := txnProducer(t, b.addr)
	var want []string
	for txn := range 10 {
		want = append(want, commitTxn(ctx, t, p, txn, 4)...)
	}
	openTxn(ctx, t, p, "open", []int32{0, 1, 2, 3})
	killDevKafka(t, b)
	p.Close()

	again := startDevKafka(t, "--data-dir", dir)
	wantPrinted(t, again, "1 open transaction(s) aborted, 0 interrupted commit(s) completed")
	p = txnProducer(t, again.addr)
	for txn := 10; txn < 15; txn++ {
		want = append(want, commitTxn(ctx, t, p, txn, 4)...)
	}
	checkCommitted(t, again.addr, want)
}

// The broker SIGKILLed at random moments while a producer commits one transaction after
// another, and restarted on the same port: the producer's client lives on across the restarts
// (as a running pipeline's does), and after an error it starts again with a new client (as a
// sink does). Every transaction the producer saw commit is there for a read_committed reader,
// and each one whose commit it did not see answered is there whole or not at all.
func TestDevKafkaKilledMidWrite(t *testing.T) {
	listen := freeAddr(t)
	ctx, dir, b := crashTest(t, "--listen", listen)
	args := []string{"--listen", listen, "--data-dir", dir}
	stop := make(chan struct{})
	done := make(chan producedTxns)
	var commits atomic.Int64
	go produceTxns(ctx, b.addr, &commits, stop, done)
	const kills = 3
	for range kills {
		// Kill while the producer writes: after it committed a few transactions since the
		// last restart, at a random point of the next one.
		for from := commits.Load(); commits.Load() < from+3 && ctx.Err() == nil; {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		killDevKafka(t, b)
		time.Sleep(200 * time.Millisecond)
		b = startDevKafka(t, args...)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}

	got := readCommitted(t, b.addr)
	seen := map[string]bool{}
	for _, v := range got {
		seen[v] = true
	}
	if missing := firstNotIn(r.committed, got); missing != "none" {
		t.Fatalf("after %d kills a read_committed reader lacks %s of a committed transaction (%d records read, %d committed)", kills, missing, len(got), len(r.committed))
	}
	want := len(r.committed)
	for _, values := range r.inDoubt {
		n := 0
		for _, v := range values {
			if seen[v] {
				n++
			}
		}
		if n != 0 && n != len(values) {
			t.Fatalf("a transaction cut by a kill is partly visible: %d of its %d records", n, len(values))
		}
		want += n
	}
	if len(got) != want {
		t.Fatalf("a read_committed reader saw %d records, want %d (the committed transactions, and the cut ones that are whole)", len(got), want)
	}
	t.Logf("%d kills, %d transactions (%d cut by a kill), %d records read", kills, r.txns, len(r.inDoubt), len(got))
}

// producedTxns is what produceTxns did.
type producedTxns struct {
	committed []string   // the values of the transactions whose commit was answered
	inDoubt   [][]string // the values of each transaction that failed
	txns      int
	err       error
}

// produceTxns commits transactions of 100 records over 4 partitions of topic out, one after
// another, until stop is closed, and counts the commits in commits.
func produceTxns(ctx context.Context, addr string, commits *atomic.Int64, stop <-chan struct{}, done chan<- producedTxns) {
	var r producedTxns
	newProducer := func() *kgo.Client {
		p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("dev-crash"), kgo.DefaultProduceTopic("out"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(10*time.Second))
		if err != nil && r.err == nil {
			r.err = err
		}
		return p
	}
	p := newProducer()
	defer func() { p.Close(); done <- r }()
	for r.err == nil {
		select {
		case <-stop:
			return
		default:
		}
		values := txnValues(r.txns, 4)
		r.txns++
		var recs []*kgo.Record
		for i, v := range values {
			recs = append(recs, &kgo.Record{Partition: int32(i % 4), Value: []byte(v)})
		}
		err := p.BeginTransaction()
		if err == nil {
			err = p.ProduceSync(ctx, recs...).FirstErr()
		}
		if err == nil {
			err = p.EndTransaction(ctx, kgo.TryCommit)
		}
		if err == nil {
			r.committed = append(r.committed, values...)
			commits.Add(1)
			continue
		}
		r.inDoubt = append(r.inDoubt, values)
		p.Close()
		p = newProducer()
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// A broker killed in the middle of EndTxn(commit) has written the commit marker to some of the
// transaction's partitions and not to the others. After the restart the whole transaction is
// visible: it was committing, and Kafka commits every partition of a transaction or none.
// kfake's replay dropped the partitions without a marker: a read_committed reader saw half of
// the transaction.
func TestDevKafkaCrashDuringCommit(t *testing.T) {
	t.Parallel()
	ctx, dir, b := crashTest(t)

	p := txnProducer(t, b.addr)
	want := commitTxn(ctx, t, p, 0, 4)
	want = append(want, openTxn(ctx, t, p, "committing", []int32{0, 1, 2, 3})...)
	// The broker's EndTxn writes a marker per partition in turn: stop after the first two, as
	// a kill between two marker writes does.
	id, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeMarker(ctx, t, b.addr, id, epoch, true, "out", 0, 1)
	killDevKafka(t, b)
	p.Close()

	again := startDevKafka(t, "--data-dir", dir)
	wantPrinted(t, again, "0 open transaction(s) aborted, 1 interrupted commit(s) completed")
	checkCommitted(t, again.addr, want)

	// A clean stop after the recovery leaves nothing to recover.
	again.stop(t)
	wantPrinted(t, startDevKafka(t, "--data-dir", dir), "")
}

// A transaction open at a clean stop is carried over by kfake (its session state), so that the
// producer can still end it. Killed after that restart, before anything more was written to
// the partition, the broker loaded the partition from the snapshot of the clean stop, and the
// transaction was neither carried over again nor aborted: its records showed as committed as
// soon as the partition moved on.
func TestDevKafkaCrashAfterCleanRestart(t *testing.T) {
	t.Parallel()
	ctx, dir, b := crashTest(t)
	p := txnProducer(t, b.addr)
	want := commitTxn(ctx, t, p, 0, 4)
	openTxn(ctx, t, p, "open", []int32{0})
	b.stop(t)
	p.Close()
	killDevKafka(t, startDevKafka(t, "--data-dir", dir))

	again := startDevKafka(t, "--data-dir", dir)
	wantPrinted(t, again, "1 open transaction(s) aborted")
	p = txnProducer(t, again.addr)
	want = append(want, commitTxn(ctx, t, p, 1, 4)...)
	checkCommitted(t, again.addr, want)
}

// When the log cannot tell how a transaction ended, the broker refuses to start and says what
// to do. Here the producer wrote records after a commit marker of its own epoch (as a client
// without KIP-890's epoch bump per transaction does): a commit marker of that epoch no longer
// says that the open records were being committed.
func TestDevKafkaCrashUndecidable(t *testing.T) {
	t.Parallel()
	ctx, dir, b := crashTest(t)
	p := txnProducer(t, b.addr)
	openTxn(ctx, t, p, "first", []int32{0, 1})
	id, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeMarker(ctx, t, b.addr, id, epoch, true, "out", 0)
	if err := p.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("after the marker")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	killDevKafka(t, b)
	p.Close()

	cmd := exec.CommandContext(ctx, binary, "dev", "kafka", "--listen", "127.0.0.1:0", "--data-dir", dir)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitRuntime {
		t.Fatalf("sluice dev kafka on an undecidable log: %v, want exit %d:\n%s", err, exitRuntime, out)
	}
	for _, want := range []string{"cannot tell whether their transaction committed", "the broker does not serve it", "remove " + dir} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
}

// wantPrinted checks the recovery line the broker printed at start ("": none).
func wantPrinted(t *testing.T, b *devBroker, recovery string) {
	t.Helper()
	var got string
	for _, line := range b.printed {
		if strings.Contains(line, "had not stopped cleanly") {
			got = line
		}
	}
	if !strings.Contains(got, recovery) || (recovery == "") != (got == "") {
		t.Errorf("at start the broker printed %q about its recovery, want %q", got, recovery)
	}
}

// crashTest skips under -short, and starts `sluice dev kafka` with args, a topic out of 4
// partitions, and a new data directory.
func crashTest(t *testing.T, args ...string) (context.Context, string, *devBroker) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts and kills broker processes")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	return ctx, dir, startDevKafka(t, append(args, "--topic", "out:4", "--data-dir", dir)...)
}

func txnProducer(t *testing.T, addr string) *kgo.Client {
	return devClient(t, addr, kgo.TransactionalID("dev-crash"), kgo.DefaultProduceTopic("out"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// openTxn begins a transaction and produces one record to each of parts, acknowledged (in the
// broker's log), and returns their values.
func openTxn(ctx context.Context, t *testing.T, p *kgo.Client, name string, parts []int32) []string {
	t.Helper()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var values []string
	var recs []*kgo.Record
	for _, part := range parts {
		for i := range 25 {
			v := fmt.Sprintf("%s-p%d-%d", name, part, i)
			values = append(values, v)
			recs = append(recs, &kgo.Record{Partition: part, Value: []byte(v)})
		}
	}
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return values
}

// commitTxn writes one transaction over partitions 0..parts-1 and commits it.
func commitTxn(ctx context.Context, t *testing.T, p *kgo.Client, txn int, parts int32) []string {
	t.Helper()
	all := make([]int32, parts)
	for i := range all {
		all[i] = int32(i)
	}
	values := openTxn(ctx, t, p, fmt.Sprintf("txn%d", txn), all)
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	return values
}

// txnValues are the values of transaction txn in TestDevKafkaKilledMidWrite: 25 per partition.
func txnValues(txn int, parts int) []string {
	values := make([]string, 25*parts)
	for i := range values {
		values[i] = fmt.Sprintf("txn%d-%d", txn, i)
	}
	return values
}

// writeMarker writes a transaction marker of producer id/epoch to some partitions of topic.
func writeMarker(ctx context.Context, t *testing.T, addr string, id int64, epoch int16, commit bool, topic string, parts ...int32) {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = id, epoch, commit
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, parts
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := req.RequestWith(ctx, devClient(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					t.Fatalf("marker on %s/%d: %v", rt.Topic, rp.Partition, err)
				}
			}
		}
	}
}

func killDevKafka(t *testing.T, b *devBroker) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = b.cmd.Wait()
}

// checkCommitted reads topic out with read_committed and compares what it read with want.
func checkCommitted(t *testing.T, addr string, want []string) {
	t.Helper()
	got := readCommitted(t, addr)
	sort.Strings(got)
	want = append([]string(nil), want...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("a read_committed reader saw %d records, want the %d of the committed transactions; first missing: %s, first extra: %s",
			len(got), len(want), firstNotIn(want, got), firstNotIn(got, want))
	}
}

// readCommitted reads topic out with read_committed (readCommittedTo).
func readCommitted(t *testing.T, addr string) []string {
	t.Helper()
	var got []string
	readCommittedTo(t, addr, "out", func(r *kgo.Record) { got = append(got, string(r.Value)) })
	return got
}

// firstNotIn returns the first value of a that b lacks, or "none".
func firstNotIn(a, b []string) string {
	have := map[string]bool{}
	for _, v := range b {
		have[v] = true
	}
	for _, v := range a {
		if !have[v] {
			return v
		}
	}
	return "none"
}
