// Command kafkaiceberg measures Kafka -> WriteToIceberg (map_only): MB of input per
// CPU-second of the sluice process, data file sizes and commit latency. It starts `sluice dev
// kafka` as its own process, fills a topic with ~1 KiB JSON records, and runs
// `/usr/bin/time -v sluice run X.yaml --stop-at-end` on it several times per table layout,
// each time into a fresh warehouse, printing the median. docs/iceberg.md quotes its output.
//
//	go build -o /tmp/sluice ./cmd/sluice && go run ./bench/kafkaiceberg -sluice /tmp/sluice
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/sql"
	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite"
)

func main() {
	sluice := flag.String("sluice", "sluice", "the sluice binary")
	records := flag.Int("records", 200_000, "records to produce")
	runs := flag.Int("runs", 3, "runs per layout; the median is reported")
	trigger := flag.String("trigger", "2s", "triggering_frequency_seconds of the sink")
	layouts := flag.String("layouts", "unpartitioned;bucket(id, 64)", "table layouts, separated by semicolons: unpartitioned or a partition field")
	flag.Parse()
	if err := run(*sluice, *records, *runs, *trigger, strings.Split(*layouts, ";")); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaiceberg:", err)
		os.Exit(1)
	}
}

func run(sluice string, records, runs int, trigger string, layouts []string) error {
	dir, err := os.MkdirTemp("", "kafkaiceberg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	broker := exec.Command(sluice, "dev", "kafka", "--listen", "127.0.0.1:0", "--topic", "bench:8")
	out, err := broker.StdoutPipe()
	if err != nil {
		return err
	}
	if err := broker.Start(); err != nil {
		return err
	}
	defer broker.Process.Kill()
	addr := ""
	for sc := bufio.NewScanner(out); addr == "" && sc.Scan(); {
		if a, found := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bootstrap_servers: "); found {
			addr = a
		}
	}
	if addr == "" {
		return fmt.Errorf("sluice dev kafka printed no address")
	}
	go func() { _, _ = bufio.NewReader(out).WriteTo(devNull{}) }()
	bytes, err := produce(addr, records)
	if err != nil {
		return err
	}
	mb := float64(bytes) / 1e6
	fmt.Printf("input: %d records, %.1f MB (%.0f bytes each), topic of 8 partitions; trigger %s; %d runs per layout\n\n",
		records, mb, float64(bytes)/float64(records), trigger, runs)
	fmt.Printf("%-16s %8s %9s %7s %7s %8s %11s %11s %s\n", "layout", "CPU s", "MB/CPU-s", "wall s", "RSS MB", "commits", "commit p50", "commit p99", "data files (median run)")
	for _, layout := range layouts {
		layout = strings.TrimSpace(layout)
		var res []result
		var commits []time.Duration
		for i := range runs {
			r, err := runOnce(sluice, filepath.Join(dir, fmt.Sprintf("%s-%d", sanitize(layout), i)), addr, layout, trigger)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", layout, i+1, err)
			}
			res = append(res, r)
			commits = append(commits, r.commits...)
		}
		slices.SortFunc(res, func(a, b result) int { return cmpFloat(a.cpu, b.cpu) })
		med := res[len(res)/2]
		slices.Sort(commits)
		fmt.Printf("%-16s %8.2f %9.1f %7.2f %7.0f %8d %11s %11s %s\n", layout, med.cpu, mb/med.cpu, med.wall, med.rssMB,
			len(commits), pct(commits, 50), pct(commits, 99), med.files)
	}
	return nil
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// produce writes n ~1 KiB JSON records of a fixed schema (like Google's GAME_EVENT, padded)
// to the topic bench and returns their total size.
func produce(addr string, n int) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(20_000))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	var total int64
	errc := make(chan error, 1)
	for i := range n {
		var note strings.Builder
		for note.Len() < 820 {
			note.WriteString(words[rng.IntN(len(words))])
			note.WriteByte(' ')
		}
		v, _ := json.Marshal(map[string]any{
			"id": i, "user": fmt.Sprintf("user-%d", rng.IntN(100_000)), "team": fmt.Sprintf("team-%d", rng.IntN(500)),
			"score": rng.IntN(10_000), "ts": time.Unix(1_700_000_000+int64(i), 0).UTC().Format(time.RFC3339),
			"event": words[rng.IntN(len(words))], "amount": float64(rng.IntN(1_000_000)) / 100, "note": note.String(),
		})
		total += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Topic: "bench", Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	select {
	case err := <-errc:
		return 0, err
	default:
	}
	return total, nil
}

type result struct {
	cpu, wall, rssMB float64
	commits          []time.Duration
	files            string
}

func runOnce(sluice, dir, addr, layout, trigger string) (result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{}, err
	}
	parts := ""
	if layout != "unpartitioned" {
		parts = fmt.Sprintf("      partition_fields: [%q]\n", layout)
	}
	pipeline := filepath.Join(dir, "p.yaml")
	yaml := fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: bench
      format: JSON
      auto_offset_reset_config: earliest
      schema:
        type: object
        properties:
          id: {type: integer}
          user: {type: string}
          team: {type: string}
          score: {type: integer}
          ts: {type: string, format: date-time}
          event: {type: string}
          amount: {type: number}
          note: {type: string}
  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
          points: score * 2
  sink:
    type: WriteToIceberg
    config:
      table: db.events
      triggering_frequency_seconds: %s
%s      catalog_properties:
        type: sql
        uri: %s
        warehouse: %s
options:
  name: bench_%d
`, addr, trigger, parts, filepath.Join(dir, "catalog.db"), filepath.Join(dir, "wh"), time.Now().UnixNano())
	if err := os.WriteFile(pipeline, []byte(yaml), 0o644); err != nil {
		return result{}, err
	}
	timeOut := filepath.Join(dir, "time.txt")
	cmd := exec.Command("/usr/bin/time", "-v", "-o", timeOut, sluice, "run", pipeline, "--stop-at-end", "--log-level", "debug")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	var r result
	tv, err := os.ReadFile(timeOut)
	if err != nil {
		return r, err
	}
	for _, line := range strings.Split(string(tv), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch k {
		case "User time (seconds)", "System time (seconds)":
			f, _ := strconv.ParseFloat(v, 64)
			r.cpu += f
		case "Maximum resident set size (kbytes)":
			f, _ := strconv.ParseFloat(v, 64)
			r.rssMB = f / 1024
		case "Elapsed (wall clock) time (h:mm:ss or m:ss)":
			r.wall = clock(v)
		}
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		var l struct {
			Msg  string `json:"msg"`
			Took string `json:"took"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "epoch committed" {
			if d, err := time.ParseDuration(l.Took); err == nil {
				r.commits = append(r.commits, d)
			}
		}
	}
	r.files, err = fileSizes(dir)
	return r, err
}

// fileSizes describes the data files of the table in dir.
func fileSizes(dir string) (string, error) {
	ctx := context.Background()
	cat, err := catalog.Load(ctx, "sluice", iceberg.Properties{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		return "", err
	}
	tbl, err := cat.LoadTable(ctx, []string{"db", "events"})
	if err != nil {
		return "", err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return "", err
	}
	var sizes []int64
	var rows int64
	for _, t := range tasks {
		sizes = append(sizes, t.File.FileSizeBytes())
		rows += t.File.Count()
	}
	if len(sizes) == 0 {
		return "none", nil
	}
	slices.Sort(sizes)
	mib := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	return fmt.Sprintf("%d rows, %d files in %d snapshots, MiB min/median/max %s/%s/%s", rows, len(sizes),
		len(tbl.Metadata().Snapshots()), mib(sizes[0]), mib(sizes[len(sizes)/2]), mib(sizes[len(sizes)-1])), nil
}

func clock(s string) float64 {
	var total float64
	for _, p := range strings.Split(s, ":") {
		f, _ := strconv.ParseFloat(p, 64)
		total = total*60 + f
	}
	return total
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	return ds[min(len(ds)-1, len(ds)*p/100)].Round(time.Millisecond).String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
