package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/sql" // the sql catalog the pipelines use
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"
	_ "modernc.org/sqlite" // its sqlite driver
)

// scenario is one pipeline the harness runs as its own sluice process, once per run.
type scenario struct {
	name      string
	source    string  // kafka or iceberg (the table a kafka-iceberg run of the same round wrote)
	sink      string  // iceberg, kafka or bigquery
	partition string  // the Iceberg partition field, "" for an unpartitioned table
	delivery  string  // options.delivery
	raw       string  // the raw limit it is held against, "" for none
	google    float64 // Google's published MB per vCPU-second for this shape, 0 for none
	groupBy   string  // GroupByKey on this field, values: id, fixed 60 s windows; "" for none
	upsert    string  // WriteToIceberg upsert by this key column; "" appends
	hotKeys   int     // with upsert: the key is hot = id % hotKeys (a MapToFields field), 0 keys by id
	// countBy: Combine counting the records per this field in fixed 60 s windows into
	// Kafka; with copies the source reads in a consumer group, so the Combine runs through a
	// repartition topic (docs/scaling.md), here with one copy.
	countBy  string
	copies   bool
	notBuilt string // why it cannot run yet; such a scenario prints a row and no numbers
}

// scenarios are the throughput scenarios in the order they run. An unpartitioned table's
// files are written by sluice's column encoder (rawParquetRow), a partitioned one's by
// iceberg-go's writer through pqarrow (rawParquet).
var scenarios = []scenario{
	{name: "kafka-iceberg", source: "kafka", sink: "iceberg", delivery: "exactly_once", raw: rawParquetRow, google: 3.75},
	{name: "kafka-iceberg-bucket", source: "kafka", sink: "iceberg", partition: "bucket(id, 64)", delivery: "exactly_once", raw: rawParquet, google: 3.75},
	{name: "kafka-kafka", source: "kafka", sink: "kafka", delivery: "exactly_once", raw: rawDecode},
	{name: "kafka-kafka-alo", source: "kafka", sink: "kafka", delivery: "at_least_once", raw: rawDecode},
	{name: "iceberg-kafka", source: "iceberg", sink: "kafka", delivery: "exactly_once", raw: rawIcebergKafka, google: 34},
	{name: "kafka-iceberg-upsert", source: "kafka", sink: "iceberg", upsert: "id", delivery: "exactly_once", raw: rawParquet},
	{name: "kafka-iceberg-upsert-hot", source: "kafka", sink: "iceberg", upsert: "hot", hotKeys: 20_000, delivery: "exactly_once", raw: rawParquet},
	{name: "kafka-iceberg-groupbykey", source: "kafka", sink: "iceberg", groupBy: "country", delivery: "exactly_once", raw: rawParquetRow, google: 3.75 / 1.16},
	{name: "kafka-kafka-count", source: "kafka", sink: "kafka", countBy: "team", delivery: "exactly_once", raw: rawDecode},
	{name: "kafka-kafka-count-copies", source: "kafka", sink: "kafka", countBy: "team", copies: true, delivery: "exactly_once", raw: rawDecode},
	{name: "kafka-bigquery", source: "kafka", sink: "bigquery", delivery: "exactly_once", raw: rawDecode, google: 11},
	{name: "kafka-bigquery-alo", source: "kafka", sink: "bigquery", delivery: "at_least_once", raw: rawDecode, google: 11},
}

// env is what every run shares: the binary, the broker, the loaded topic.
type env struct {
	sluice       string
	addr         string
	dir          string
	records      int
	inputBytes   int64
	trigger      string
	profiles     string          // where scenario runs write CPU profiles, or ""
	heapProfiles string          // where scenario runs write their largest heap profile, or ""
	base         string          // --sluice-base: the binary every scenario also runs with, or ""
	bq           *bigQueryServer // started for the first BigQuery scenario
}

// measurement is one run of a scenario or a raw limit, from the process's own accounting.
type measurement struct {
	Wall    float64   `json:"wall_s"`
	CPU     float64   `json:"cpu_s"`
	RSSMB   float64   `json:"peak_rss_mb"`
	Rows    int64     `json:"rows"`
	Commits []float64 `json:"commit_ms,omitempty"`
	Files   []int64   `json:"data_file_bytes,omitempty"`
	Check   string    `json:"check"` // "" when the sink holds what it should
}

// warehouse is where run i of the unpartitioned kafka-iceberg scenario keeps its table,
// which iceberg-kafka of the same round reads.
func (e *env) warehouse(name string, run int) string {
	return filepath.Join(e.dir, fmt.Sprintf("%s-%d", name, run))
}

// catalogYAML is the catalog_properties of the table in dir.
func catalogYAML(dir string) string {
	return fmt.Sprintf("{type: sql, uri: %s, warehouse: %s}", filepath.Join(dir, "catalog.db"), filepath.Join(dir, "wh"))
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad) + "\n"
}

// kafkaSource is the ReadFromKafka source of the pipelines, with the MapToFields transform
// every Kafka scenario applies (one derived field, as in map_only) and the extra fields
// (lines "name: expr") some scenarios add.
func kafkaSource(addr, topic string, extra ...string) string {
	fields := "points: score * 2\n"
	for _, f := range extra {
		fields += f + "\n"
	}
	return fmt.Sprintf(`  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
      schema:
%s  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
%s`, addr, topic, indent(benchdata.EventSchema, 8), indent(fields, 10))
}

// kafkaSink is a WriteToKafka sink writing JSON.
func kafkaSink(addr, topic string) string {
	return fmt.Sprintf("  sink:\n    type: WriteToKafka\n    config: {bootstrap_servers: %s, topic: %s, format: JSON}\n", addr, topic)
}

// pipeline writes the pipeline file of run i of s into dir and returns its path, with the
// Kafka topic it writes to ("" for an Iceberg sink).
func (e *env) pipeline(s scenario, run int, dir string) (path, outTopic string, err error) {
	var b strings.Builder
	b.WriteString("pipeline:\n  type: chain\n")
	switch s.source {
	case "kafka":
		var extra []string
		if s.hotKeys > 0 {
			extra = append(extra, fmt.Sprintf("%s: id %% %d", s.upsert, s.hotKeys))
		}
		src := kafkaSource(e.addr, "bench", extra...)
		if s.copies {
			src = strings.Replace(src, "      auto_offset_reset_config: earliest\n", fmt.Sprintf(
				"      auto_offset_reset_config: earliest\n      consumer_config: {group.id: bench_%d_%d}\n", run, time.Now().UnixNano()), 1)
		}
		b.WriteString(src)
	case "iceberg":
		fmt.Fprintf(&b, "  source:\n    type: ReadFromIceberg\n    config:\n      table: db.events\n      catalog_properties: %s\n",
			catalogYAML(e.warehouse("kafka-iceberg", run)))
	}
	if s.countBy != "" {
		fmt.Fprintf(&b, "    - type: Combine\n      windowing: {type: fixed, size: 60s}\n      config: {group_by: %s, combine: {n: {value: id, fn: count}}}\n", s.countBy)
	}
	if s.groupBy != "" {
		fmt.Fprintf(&b, "    - type: GroupByKey\n      windowing: {type: fixed, size: 60s}\n      config: {key: %s, values: id}\n", s.groupBy)
	}
	switch s.sink {
	case "iceberg":
		parts := ""
		if s.partition != "" {
			parts = fmt.Sprintf("      partition_fields: [%q]\n", s.partition)
		}
		if s.upsert != "" {
			parts += fmt.Sprintf("      upsert: {key: [%s]}\n", s.upsert)
		}
		fmt.Fprintf(&b, "  sink:\n    type: WriteToIceberg\n    config:\n      table: db.events\n      triggering_frequency_seconds: %s\n%s      catalog_properties: %s\n",
			e.trigger, parts, catalogYAML(dir))
	case "kafka":
		outTopic = fmt.Sprintf("out-%s-%d-%d", s.name, run, time.Now().UnixNano())
		b.WriteString(kafkaSink(e.addr, outTopic))
	case "bigquery":
		outTopic = fmt.Sprintf("%s_%d_%d", strings.ReplaceAll(s.name, "-", "_"), run, time.Now().UnixNano())
		b.WriteString(e.bq.sink(outTopic, e.trigger))
	}
	fmt.Fprintf(&b, "options:\n  name: bench_%s_%d_%d\n  delivery: %s\n  checkpoint_interval: %s\n",
		strings.ReplaceAll(s.name, "-", "_"), run, time.Now().UnixNano(), s.delivery, e.trigger)
	path = filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", "", fmt.Errorf("writing the pipeline: %w", err)
	}
	return path, outTopic, nil
}

// runScenario runs s once (round run) with the sluice binary bin, --stop-at-end, and checks
// its sink; label names the series (the scenario, or NAME@base for --sluice-base).
func (e *env) runScenario(ctx context.Context, s scenario, run int, bin, label string) (measurement, error) {
	if s.sink == "bigquery" && e.bq == nil {
		var err error
		if e.bq, err = e.startBigQuery(ctx); err != nil {
			return measurement{}, err
		}
	}
	dir := e.warehouse(label, run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return measurement{}, fmt.Errorf("%w", err)
	}
	path, out, err := e.pipeline(s, run, dir)
	if err != nil {
		return measurement{}, err
	}
	args := []string{"run", path, "--stop-at-end", "--log-level", "debug"}
	if e.profiles != "" {
		args = append(args, "--cpuprofile", filepath.Join(e.profiles, fmt.Sprintf("%s-%d.prof", label, run)))
	}
	var heap *heapWatch
	if e.heapProfiles != "" {
		var flags []string
		if heap, flags, err = newHeapWatch(filepath.Join(e.heapProfiles, fmt.Sprintf("%s-%d.heap", label, run))); err != nil {
			return measurement{}, err
		}
		args = append(args, flags...)
	}
	m, _, stderr, err := measure(ctx, heap, bin, args...)
	if err != nil {
		return m, err
	}
	m.Commits = commitLatencies(stderr)
	switch s.sink {
	case "iceberg":
		var rows int64
		m.Files, rows, err = tableFiles(ctx, dir)
		if err != nil {
			return m, err
		}
		m.Rows = rows
		switch {
		case s.upsert != "":
			// The data files hold the rows before deletes; the check scans the live ones.
			// rows/s counts the input records, as for appends.
			m.Rows = int64(e.records)
			if m.Check, err = s.checkUpserts(ctx, dir, e.records); err != nil {
				return m, err
			}
		case s.groupBy != "":
			if rows, err = groupedValues(ctx, dir); err != nil {
				return m, err
			}
			fallthrough
		default:
			if rows != int64(e.records) {
				m.Check = fmt.Sprintf("table holds %d records, want %d", rows, e.records)
			}
		}
	case "kafka":
		if s.countBy != "" {
			if m.Rows, err = countedRecords(ctx, e.addr, out); err != nil {
				return m, err
			}
			if m.Rows != int64(e.records) {
				m.Check = fmt.Sprintf("the counts add up to %d records, want %d", m.Rows, e.records)
			}
			return m, deleteTopics(ctx, e.addr, out)
		}
		c, err := countTopic(ctx, e.addr, out, e.records)
		if err != nil {
			return m, err
		}
		if err := deleteTopics(ctx, e.addr, out); err != nil {
			return m, err
		}
		m.Rows = c.records
		m.Check = c.check(e.records, s.delivery == "exactly_once")
	case "bigquery": // the server keeps counts, not rows: the crash tests check the ids
		if m.Rows, err = e.bq.rows(ctx, out); err != nil {
			return m, err
		}
		if m.Rows < int64(e.records) || s.delivery == "exactly_once" && m.Rows != int64(e.records) {
			m.Check = fmt.Sprintf("table holds %d rows, want %d", m.Rows, e.records)
		}
	}
	return m, nil
}

// measure runs a process to its end and returns its wall time, CPU time (user + system) from
// wait4's rusage and peak RSS (rssWatch), with what it wrote. With heap, it keeps the
// process's heap profile at its largest.
func measure(ctx context.Context, heap *heapWatch, name string, args ...string) (m measurement, stdout, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err = cmd.Start(); err == nil {
		stopRSS := rssWatch(cmd.Process.Pid)
		hctx, stopHeap := context.WithCancel(ctx)
		heapDone := make(chan struct{})
		go func() {
			defer close(heapDone)
			if heap != nil {
				heap.run(hctx)
			}
		}()
		err = cmd.Wait()
		m.RSSMB = stopRSS()
		stopHeap()
		<-heapDone
	}
	m.Wall = time.Since(start).Seconds()
	if err != nil {
		return m, out.Bytes(), errOut.Bytes(), fmt.Errorf("%s %s: %w\n%s\n%s", filepath.Base(name), strings.Join(args, " "), err, tail(errOut.Bytes()), tail(out.Bytes()))
	}
	m.CPU = cpuTime(cmd.ProcessState)
	return m, out.Bytes(), errOut.Bytes(), nil
}

// cpuTime is the CPU time (user + system) of a process that ended, in seconds.
func cpuTime(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return 0
}

// tail is the last few lines of a process's output, for error messages.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// commitLatencies are the "took" of the runner's debug "epoch committed" lines, in ms.
func commitLatencies(stderr []byte) []float64 {
	var ms []float64
	for line := range bytes.Lines(stderr) {
		var l struct {
			Msg  string `json:"msg"`
			Took string `json:"took"`
		}
		if json.Unmarshal(line, &l) == nil && l.Msg == "epoch committed" {
			if d, err := time.ParseDuration(l.Took); err == nil {
				ms = append(ms, float64(d)/float64(time.Millisecond))
			}
		}
	}
	return ms
}

// tableFiles returns the data file sizes and the row count of table db.events in dir.
func tableFiles(ctx context.Context, dir string) ([]int64, int64, error) {
	tbl, err := loadTable(ctx, dir)
	if err != nil {
		return nil, 0, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("planning a scan of %s: %w", dir, err)
	}
	var sizes []int64
	var rows int64
	for _, t := range tasks {
		sizes = append(sizes, t.File.FileSizeBytes())
		rows += t.File.Count()
	}
	slices.Sort(sizes)
	return sizes, rows, nil
}

// loadTable loads db.events of the warehouse in dir, with a catalog handle of its own.
func loadTable(ctx context.Context, dir string) (*table.Table, error) {
	cat, err := catalog.Load(ctx, "sluice", iceberg.Properties{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		return nil, fmt.Errorf("catalog of %s: %w", dir, err)
	}
	tbl, err := cat.LoadTable(ctx, []string{"db", "events"})
	if err != nil {
		return nil, fmt.Errorf("table of %s: %w", dir, err)
	}
	return tbl, nil
}

// checkUpserts scans the live rows of an upsert scenario's table with iceberg-go (which
// applies the equality deletes) and returns what is wrong with them, "" when nothing: one row
// per key, every key of the records ids 0..records-1 present, each row's key that of its id.
func (s scenario) checkUpserts(ctx context.Context, dir string, records int) (string, error) {
	tbl, err := loadTable(ctx, dir)
	if err != nil {
		return "", err
	}
	fields := []string{"id"}
	if s.upsert != "id" {
		fields = append(fields, s.upsert)
	}
	at, err := tbl.Scan(table.WithSelectedFields(fields...)).ToArrowTable(ctx)
	if err != nil {
		return "", fmt.Errorf("scanning %s: %w", dir, err)
	}
	defer at.Release()
	keys := records
	if s.hotKeys > 0 {
		keys = min(records, s.hotKeys)
	}
	seen := make([]bool, keys)
	var live, wrong, twice int
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		key := ids
		if len(fields) > 1 {
			key = rec.Column(1).(*array.Int64)
		}
		for i := range ids.Len() {
			live++
			k := key.Value(i)
			switch {
			case k < 0 || k >= int64(keys) || s.hotKeys > 0 && k != ids.Value(i)%int64(s.hotKeys):
				wrong++
			case seen[k]:
				twice++
			default:
				seen[k] = true
			}
		}
	}
	if err := tr.Err(); err != nil {
		return "", fmt.Errorf("reading the scan of %s: %w", dir, err)
	}
	if live != keys || wrong > 0 || twice > 0 {
		return fmt.Sprintf("table holds %d live rows for %d keys (%d keys twice, %d with a wrong key)", live, keys, twice, wrong), nil
	}
	return "", nil
}

// groupedValues counts the ids a GroupByKey scenario's table holds in its values lists.
func groupedValues(ctx context.Context, dir string) (int64, error) {
	tbl, err := loadTable(ctx, dir)
	if err != nil {
		return 0, err
	}
	at, err := tbl.Scan(table.WithSelectedFields("values")).ToArrowTable(ctx)
	if err != nil {
		return 0, fmt.Errorf("scanning %s: %w", dir, err)
	}
	defer at.Release()
	var n int64
	for _, chunk := range at.Column(0).Data().Chunks() {
		offsets := chunk.(*array.List).Offsets()
		n += int64(offsets[len(offsets)-1] - offsets[0])
	}
	return n, nil
}

// topicCount is what a read_committed consumer found in an output topic.
type topicCount struct {
	records  int64 // records read
	distinct int   // distinct ids in [0, want)
	foreign  int   // records without such an id
}

func (c topicCount) check(want int, exactly bool) string {
	switch {
	case c.distinct != want:
		return fmt.Sprintf("%d of %d ids in the output", c.distinct, want)
	case c.foreign > 0:
		return fmt.Sprintf("%d records with unknown ids", c.foreign)
	case exactly && c.records != int64(want):
		return fmt.Sprintf("%d records for %d ids: duplicates", c.records, want)
	}
	return ""
}

// countedRecords adds up the counts (n) of a counting scenario's output topic, read with
// read_committed until nothing more comes for a second.
func countedRecords(ctx context.Context, addr, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return 0, fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()
	var total int64
	var p fastjson.Parser
	for idle := 15 * time.Second; ; idle = time.Second {
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if fs.NumRecords() == 0 {
			if err := fetchErr(fs); err != nil {
				return total, fmt.Errorf("counting %s: %w", topic, err)
			}
			return total, ctx.Err()
		}
		fs.EachRecord(func(r *kgo.Record) {
			if v, err := p.ParseBytes(r.Value); err == nil {
				total += int64(v.GetInt("n"))
			}
		})
	}
}

// countTopic reads topic from its start with read_committed until it has seen want records
// and nothing more came for a second, or nothing came for 15 s.
func countTopic(ctx context.Context, addr, topic string, want int) (topicCount, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return topicCount{}, fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()
	seen := make([]bool, want)
	var c topicCount
	var p fastjson.Parser
	for {
		idle := 15 * time.Second
		if c.records >= int64(want) {
			idle = time.Second
		}
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if fs.NumRecords() == 0 {
			if err := ctx.Err(); err != nil {
				return c, fmt.Errorf("counting %s: %w", topic, err)
			}
			if err := fetchErr(fs); err != nil {
				return c, fmt.Errorf("counting %s: %w", topic, err)
			}
			return c, nil
		}
		fs.EachRecord(func(r *kgo.Record) {
			c.records++
			v, err := p.ParseBytes(r.Value)
			id := -1
			if err == nil {
				id = v.GetInt("id")
				if v.Get("id") == nil {
					id = -1
				}
			}
			switch {
			case id < 0 || id >= want:
				c.foreign++
			case !seen[id]:
				seen[id] = true
				c.distinct++
			}
		})
	}
}

// fetchErr is the first error of fs other than the end of the poll's context.
func fetchErr(fs kgo.Fetches) error {
	for _, e := range fs.Errors() {
		if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
			return e.Err
		}
	}
	return nil
}
