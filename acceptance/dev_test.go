package acceptance

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// devBroker is a `sluice dev kafka` process.
type devBroker struct {
	cmd     *exec.Cmd
	addr    string
	lines   chan string // the rest of its stdout
	printed []string    // its stdout up to the address
	err     strings.Builder
}

// startDevKafka starts `sluice dev kafka` with args and waits for the address it prints.
func startDevKafka(t *testing.T, args ...string) *devBroker {
	t.Helper()
	b := &devBroker{cmd: exec.Command(binary, append([]string{"dev", "kafka", "--listen", "127.0.0.1:0"}, args...)...), lines: make(chan string, 100)}
	b.cmd.Stderr = &b.err
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
		close(b.lines)
	}()
	var printed []string
	deadline := time.After(20 * time.Second)
	for b.addr == "" {
		select {
		case line, ok := <-b.lines:
			if !ok {
				t.Fatalf("sluice dev kafka ended before printing an address:\n%s\n%s", strings.Join(printed, "\n"), b.err.String())
			}
			printed = append(printed, line)
			if addr, found := strings.CutPrefix(strings.TrimSpace(line), "bootstrap_servers: "); found {
				b.addr = addr
			}
		case <-deadline:
			t.Fatalf("no address printed within 20s:\n%s", strings.Join(printed, "\n"))
		}
	}
	b.printed = printed
	return b
}

// stop sends SIGINT and checks that the broker says it stopped and exits 0.
func (b *devBroker) stop(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for line := range b.lines {
		rest = append(rest, line)
	}
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, b.err.String())
	}
	if len(rest) == 0 || rest[len(rest)-1] != "stopped" {
		t.Fatalf("after SIGINT the broker printed %q, want it to end with \"stopped\"", rest)
	}
}

func devClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consumeOne reads topic from the start and returns the first record's value.
func consumeOne(t *testing.T, addr, topic string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := devClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record came back from %s: %v", topic, err)
		}
		var got []string
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		if len(got) > 0 {
			return got[0]
		}
	}
}

// `sluice dev kafka` is a broker over TCP; with --data-dir what it holds survives a restart.
func TestDevKafka(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startDevKafka(t, "--topic", "events:3", "--data-dir", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := devClient(t, b.addr)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(topics["events"].Partitions); n != 3 {
		t.Errorf("topic events has %d partitions, want 3 (--topic events:3)", n)
	}
	if got := consumeOne(t, b.addr, "events"); got != "hello" {
		t.Fatalf("consumed %q, want hello", got)
	}
	cl.Close()
	b.stop(t)

	again := startDevKafka(t, "--data-dir", dir)
	if got := consumeOne(t, again.addr, "events"); got != "hello" {
		t.Fatalf("after a restart with --data-dir: consumed %q, want hello", got)
	}
	again.stop(t)
}

// readCommittedTo reads topic from the start with read_committed up to the end of what is
// committed in each partition when it is called (the last stable offset), and gives each
// record to each. It reads what a reader that waits for the topic to go quiet reads once the
// writers have stopped or been killed, without the wait.
func readCommittedTo(t *testing.T, addr, topic string, each func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends, err := kadm.NewClient(devClient(t, addr)).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("the committed ends of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		switch {
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition): // nothing written yet
		case o.Err != nil:
			t.Fatalf("the committed end of %s/%d: %v", topic, o.Partition, o.Err)
		case o.Offset > 0:
			want[o.Partition] = o.Offset
		}
	})
	if len(want) == 0 {
		return
	}
	// Control records (transaction markers) move the position past the end of every
	// transaction, committed or aborted.
	cl := devClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	defer cl.Close()
	at := map[int32]int64{}
	for p, end := range want {
		for at[p] < end {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("reading %s took over 2 minutes (at %v of %v)", topic, at, want)
			}
			fs.EachRecord(func(r *kgo.Record) {
				at[r.Partition] = r.Offset + 1
				if !r.Attrs.IsControl() {
					each(r)
				}
			})
		}
	}
}
