package runner_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runner"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// repartitionPipeline is Kafka -> Combine (count and sum per key in 5 s windows) -> Kafka;
// group is the consumer group ("": none).
func repartitionPipeline(addr, name, group, out string) string {
	consumer := ""
	if group != "" {
		consumer = "      consumer_config: {group.id: " + group + "}\n"
	}
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: in
      format: JSON
      auto_offset_reset_config: earliest
%s      schema: {type: object, properties: {k: {type: string}, v: {type: integer}, ts: {type: integer}}, required: [k, v, ts]}
  transforms:
    - type: AssignTimestamps
      config: {timestamp: ts}
    - type: Combine
      name: totals
      windowing: {type: fixed, size: 5s}
      config:
        group_by: [k]
        combine:
          n: {value: v, fn: count}
          total: {value: v, fn: sum}
          start: {value: ts, fn: min}
  sink:
    type: WriteToKafka
    config: {bootstrap_servers: %s, topic: %s, format: JSON}
options:
  name: %s
  checkpoint_interval: 100ms
`, addr, consumer, addr, out, name)
}

// windowTotal is one (key, window) result.
type windowTotal struct {
	K        string
	Start    int64 // s
	N, Total int64
}

// Copies of a pipeline in a consumer group group by key through a repartition topic: with one
// copy, the windows are the same as a run without a group, and both are the totals worked
// out from the input.
func TestRepartitionOneCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two pipelines over Kafka")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "in"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Keys over every partition, each partition in event-time order: a copy reading some
	// partitions would see part of every key.
	want := map[windowTotal]bool{}
	sums := map[[2]any][2]int64{}
	base := int64(1_700_000_000) // seconds
	for i := range 2000 {
		k, ts := fmt.Sprintf("k%d", i%7), base+int64(i)/10
		v, _ := json.Marshal(map[string]any{"k": k, "v": i, "ts": ts})
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Partition: int32(i % 4), Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		w := [2]any{k, ts / 5 * 5}
		s := sums[w]
		sums[w] = [2]int64{s[0] + 1, s[1] + int64(i)}
	}
	for w, s := range sums {
		want[windowTotal{K: w[0].(string), Start: w[1].(int64), N: s[0], Total: s[1]}] = true
	}
	run := func(name, group, out string) []windowTotal {
		path := filepath.Join(t.TempDir(), name+".yaml")
		p, err := runner.LoadWith(path, runner.LoadOptions{Source: []byte(repartitionPipeline(addr, name, group, out))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := runner.Execute(ctx, p, runner.RunConfig{StopAtEnd: true, Instance: "a"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return readTotals(t, addr, out)
	}
	split := run("split", "g", "out-split")
	single := run("single", "", "out-single")
	if len(split) != len(want) || len(single) != len(want) {
		t.Fatalf("%d windows through the repartition topic, %d in one run, want %d", len(split), len(single), len(want))
	}
	for i := range split {
		if !want[split[i]] || split[i] != single[i] {
			t.Fatalf("window %d: %+v through the repartition topic, %+v in one run", i, split[i], single[i])
		}
	}
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(context.Background(), "split-totals-repartition")
	if err != nil || len(topics["split-totals-repartition"].Partitions) != 4 {
		t.Errorf("the repartition topic: %v, %v", topics, err)
	}
}

// readTotals reads the committed windows of topic, sorted.
func readTotals(t *testing.T, addr, topic string) []windowTotal {
	t.Helper()
	rd, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []windowTotal
	for quiet := 0; quiet < 3; {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := rd.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			quiet++
		}
		fs.EachRecord(func(r *kgo.Record) {
			var row struct {
				K               string
				N, Total, Start int64
			}
			if err := json.Unmarshal(r.Value, &row); err != nil {
				t.Errorf("%s: %v", r.Value, err)
				return
			}
			out = append(out, windowTotal{K: row.K, Start: row.Start / 5 * 5, N: row.N, Total: row.Total})
		})
	}
	slices.SortFunc(out, func(a, b windowTotal) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}
