package runner_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/tools/status"
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
	addr, sums := keyedInput(t)
	want := map[windowTotal]bool{}
	for w, s := range sums {
		want[windowTotal{K: w.k, Start: w.start, N: s[0], Total: s[1]}] = true
	}
	split := runTo(t, repartitionPipeline(addr, "split", "g", "out-split"), addr, "out-split")
	single := runTo(t, repartitionPipeline(addr, "single", "", "out-single"), addr, "out-single")
	if len(split) != len(want) || len(single) != len(want) {
		t.Fatalf("%d windows through the repartition topic, %d in one run, want %d", len(split), len(single), len(want))
	}
	for i := range split {
		if !want[split[i]] || split[i] != single[i] {
			t.Fatalf("window %d: %+v through the repartition topic, %+v in one run", i, split[i], single[i])
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(context.Background(), "split-totals-repartition")
	if err != nil || len(topics["split-totals-repartition"].Partitions) != 4 {
		t.Errorf("the repartition topic: %v, %v", topics, err)
	}

	// sluice status shows the stage: its writer as a sink of its own, caught up with the
	// source, and the grouping's sink reading the repartition topic.
	p, err := runner.LoadWith(filepath.Join(t.TempDir(), "p.yaml"), runner.LoadOptions{Source: []byte(repartitionPipeline(addr, "split", "g", "out-split"))})
	if err != nil {
		t.Fatal(err)
	}
	st := status.Read(context.Background(), p)
	var stage, out *status.Sink
	for i, k := range st.Sinks {
		switch k.Name {
		case "totals/repartition-write":
			stage = &st.Sinks[i]
		case "WriteToKafka":
			out = &st.Sinks[i]
		}
	}
	if stage == nil || out == nil {
		t.Fatalf("status lists %+v, want the repartition stage and WriteToKafka", st.Sinks)
	}
	if !stage.Committed || stage.Lag == nil || *stage.Lag != 0 || stage.Error != "" {
		t.Errorf("the repartition stage in status: %+v, want committed with lag 0", *stage)
	}
	if !slices.ContainsFunc(out.Partitions, func(p status.Partition) bool {
		return p.Source == "kafka:split-totals-repartition" && p.Lag != nil && *p.Lag == 0
	}) {
		t.Errorf("WriteToKafka's partitions in status: %+v, want the repartition topic's, with lag 0", out.Partitions)
	}
}

// A Join of two inputs from one grouped source goes through one repartition topic (both
// inputs' rows of a key in one partition) and joins what one run without a group joins.
func TestRepartitionJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two pipelines over Kafka")
	}
	addr, _ := keyedInput(t)
	join := func(name, group, out string) string {
		p := repartitionPipeline(addr, name, group, out)
		i, j := strings.Index(p, "  transforms:"), strings.Index(p, "  sink:")
		return p[:i] + `  transforms:
    - type: AssignTimestamps
      name: timed
      input: ReadFromKafka
      config: {timestamp: ts}
    - type: Filter
      name: evens
      input: timed
      config: {keep: "v % 2 == 0"}
    - type: Filter
      name: odds
      input: timed
      config: {keep: "v % 2 == 1"}
    - type: Join
      name: pairs
      input: {e: evens, o: odds}
      windowing: {type: fixed, size: 5s}
      config:
        equalities: [{e: k, o: k}]
        fields: {e: {k: k, ev: v}, o: {ov: v}}
` + strings.Replace(p[j:], "  sink:\n", "  sink:\n    input: pairs\n", 1)
	}
	pairs := func(yaml, out string) []string {
		var rows []string
		readRecords(t, addr, out, func(v []byte) { rows = append(rows, string(v)) })
		slices.Sort(rows)
		return rows
	}
	split := join("jsplit", "g", "out-jsplit")
	runTo(t, strings.Replace(split, "type: chain", "type: composite", 1), addr, "")
	single := join("jsingle", "", "out-jsingle")
	runTo(t, strings.Replace(single, "type: chain", "type: composite", 1), addr, "")
	a, b := pairs(split, "out-jsplit"), pairs(single, "out-jsingle")
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Fatalf("%d joined rows through the repartition topic, %d in one run", len(a), len(b))
	}
}

// keyedInput starts a broker with topic in of 4 partitions holding 2000 records {k, v, ts}
// of 7 keys over every partition (each partition in event-time order), and returns the
// count and sum of v per key and 5 s window.
func keyedInput(t *testing.T) (string, map[keyWindow][2]int64) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "in"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sums := map[keyWindow][2]int64{}
	base := int64(1_700_000_000) // seconds
	for i := range 2000 {
		k, ts := fmt.Sprintf("k%d", i%7), base+int64(i)/10
		v, _ := json.Marshal(map[string]any{"k": k, "v": i, "ts": ts})
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Partition: int32(i % 4), Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		w := keyWindow{k, ts / 5 * 5}
		s := sums[w]
		sums[w] = [2]int64{s[0] + 1, s[1] + int64(i)}
	}
	return addr, sums
}

// keyWindow is a key and the start of its window, in seconds.
type keyWindow struct {
	k     string
	start int64
}

// runTo runs a pipeline with --stop-at-end as copy a and returns the windows it wrote to
// topic out ("": none read).
func runTo(t *testing.T, yaml, addr, out string) []windowTotal {
	t.Helper()
	p, err := runner.LoadWith(filepath.Join(t.TempDir(), "p.yaml"), runner.LoadOptions{Source: []byte(yaml)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := runner.Execute(ctx, p, runner.RunConfig{StopAtEnd: true, Instance: "a"}); err != nil {
		t.Fatal(err)
	}
	if out == "" {
		return nil
	}
	return readTotals(t, addr, out)
}

// readTotals reads the committed windows of topic, sorted.
func readTotals(t *testing.T, addr, topic string) []windowTotal {
	t.Helper()
	var out []windowTotal
	readRecords(t, addr, topic, func(v []byte) {
		var row struct {
			K               string
			N, Total, Start int64
		}
		if err := json.Unmarshal(v, &row); err != nil {
			t.Errorf("%s: %v", v, err)
			return
		}
		out = append(out, windowTotal{K: row.K, Start: row.Start / 5 * 5, N: row.N, Total: row.Total})
	})
	slices.SortFunc(out, func(a, b windowTotal) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// readRecords calls fn with the value of every committed record of topic, until none comes
// for a while.
func readRecords(t *testing.T, addr, topic string, fn func([]byte)) {
	t.Helper()
	rd, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for quiet := 0; quiet < 3; {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := rd.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			quiet++
		}
		fs.EachRecord(func(r *kgo.Record) { fn(r.Value) })
	}
}
