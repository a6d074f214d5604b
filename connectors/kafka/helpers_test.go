package kafka

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

// testBroker is the broker every test talks to over TCP: SLUICE_TEST_KAFKA when set (a real
// cluster), else a kfake cluster started for the package's tests.
var testBroker string

// runID keeps topic names unique across runs against a real cluster.
var runID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)

func TestMain(m *testing.M) {
	metadataMinAge = 100 * time.Millisecond
	checkpointWait = 30 * time.Second
	var cluster *kfake.Cluster
	if addr := os.Getenv("SLUICE_TEST_KAFKA"); addr != "" {
		testBroker = addr
	} else {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3))
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting kfake:", err)
			os.Exit(1)
		}
		cluster, testBroker = c, c.ListenAddrs()[0]
	}
	code := m.Run()
	if cluster != nil {
		cluster.Close()
	}
	if code == 0 {
		if err := goleak.Find(kfakeGoroutines...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// kfakeGoroutines are the goroutines of the process's embedded broker (TestEmbedded), which
// lives until the process ends.
var kfakeGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*broker).listen"),
	goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*Cluster).run"),
	goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*clientConn).read"),
	goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*clientConn).write"),
}

var topicSeq atomic.Int64

var notTopicChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// newTopic creates a topic with the given partitions, named after the test.
func newTopic(t *testing.T, partitions int32) string {
	t.Helper()
	name := fmt.Sprintf("%s-%s-%d", notTopicChars.ReplaceAllString(t.Name(), "_"), runID, topicSeq.Add(1))
	adm := kadm.NewClient(testClient(t))
	if _, err := adm.CreateTopic(context.Background(), partitions, 1, nil, name); err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	return name
}

// testClient returns a client of the test broker, closed when the test ends.
func testClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testClientAt(t, testBroker, opts...)
}

// testClientAt returns a client of the brokers at addr, closed when the test ends.
func testClientAt(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes values to one partition of topic and returns their offsets.
func produce(t *testing.T, topic string, partition int32, values ...[]byte) []int64 {
	t.Helper()
	cl := testClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: v, Timestamp: time.UnixMilli(1700000000000 + int64(len(recs)))})
	}
	res := cl.ProduceSync(context.Background(), recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Record.Offset
	}
	return out
}

func strs(values ...string) [][]byte {
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = []byte(v)
	}
	return out
}

// readTopic returns the values of every record of topic, partition by partition, up to its end
// as a read_committed (or read_uncommitted) consumer sees it now.
func readTopic(t *testing.T, topic string, committed bool) map[int32][]string {
	t.Helper()
	return readTopicAt(t, testBroker, topic, committed)
}

// readTopicAt is readTopic on the brokers at addr.
func readTopicAt(t *testing.T, addr, topic string, committed bool) map[int32][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(testClientAt(t, addr))
	list := adm.ListEndOffsets
	opts := []kgo.Opt{kgo.KeepControlRecords(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		list = adm.ListCommittedOffsets
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	ends, err := list(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	pending := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			pending[o.Partition] = o.Offset
		}
	})
	out := map[int32][]string{}
	if len(pending) == 0 {
		return out
	}
	cl := testClientAt(t, addr, opts...)
	for len(pending) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v (still pending %v)", topic, err, pending)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := pending[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if !r.Attrs.IsControl() {
				out[r.Partition] = append(out[r.Partition], string(r.Value))
			}
			if r.Offset+1 >= end {
				delete(pending, r.Partition)
			}
		})
	}
	return out
}

// all returns the values of every partition, partition after partition.
func all(m map[int32][]string) []string {
	var out []string
	for p := range int32(len(m) + 64) {
		out = append(out, m[p]...)
	}
	return out
}

const testFile = "pipeline.yaml"

var env = componenttest.Env{File: testFile}

// build builds the component of the snippet, which must have no config errors.
func build(t *testing.T, src string, inputs ...*schemas.Schema) *componenttest.Built {
	t.Helper()
	return buildFor(t, "", src, inputs...)
}

// buildFor builds the component of the snippet in a pipeline of delivery d ("": exactly_once),
// which must have no config errors.
func buildFor(t *testing.T, d component.Delivery, src string, inputs ...*schemas.Schema) *componenttest.Built {
	t.Helper()
	b := componenttest.Env{File: testFile, Options: component.Options{Delivery: d}}.Build(t, "", src, inputs...)
	if err := b.Err(); err != nil || b.Component == nil {
		t.Fatalf("build: %v", err)
	}
	return b
}

// buildErrors returns the diagnostics of a snippet that must not build.
func buildErrors(t *testing.T, src string, inputs ...*schemas.Schema) string {
	t.Helper()
	b := env.Build(t, "", src, inputs...)
	if b.Err() == nil {
		t.Fatalf("built without errors:\n%s", src)
	}
	return strings.Join(b.Diags, "\n")
}

// readSource builds a ReadFromKafka with the config lines, opens it at from (with StopAtEnd,
// unless the config bounds the read itself) and reads until io.EOF, decoding every batch.
func readSource(t *testing.T, config string, from schemas.Offsets) (*source, componenttest.Emitted, []*schemas.Batch, error) {
	t.Helper()
	src := build(t, "type: ReadFromKafka\nconfig:\n"+config).Component.(*source)
	if !strings.Contains(config, "max_") {
		src.StopAtEnd()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := src.Open(ctx, from); err != nil {
		return src, nil, nil, err
	}
	t.Cleanup(func() { src.Close() })
	out := componenttest.Emitted{}
	var batches []*schemas.Batch
	err := componenttest.ReadAll(ctx, recorder{src, &batches}, out.Emit)
	return src, out, batches, err
}

// recorder is a source that records the batches Read returns.
type recorder struct {
	component.Source
	batches *[]*schemas.Batch
}

func (r recorder) Read(ctx context.Context) (*schemas.Batch, error) {
	b, err := r.Source.Read(ctx)
	if b != nil {
		*r.batches = append(*r.batches, b)
	}
	return b, err
}

// config renders config lines for a topic on the test broker.
func config(topic string, lines ...string) string {
	return configAt(testBroker, topic, lines...)
}

// configAt renders config lines for a topic on the brokers at servers.
func configAt(servers, topic string, lines ...string) string {
	s := fmt.Sprintf("  topic: %s\n  bootstrap_servers: %s\n", topic, servers)
	for _, l := range lines {
		s += "  " + l + "\n"
	}
	return s
}

// The row schemas of formats RAW and STRING, as inputs of sinks.
var (
	rawSchema    = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})
	stringSchema = schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.String}})
)
