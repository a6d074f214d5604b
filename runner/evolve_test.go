package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/sluicehq/sluice/schemas/confluent/confluenttest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// The writer's schemas of the evolution test: v2 adds the optional field score.
const (
	eventV1 = `{"type": "record", "name": "Event", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}`
	eventV2 = `{"type": "record", "name": "Event", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
  {"name": "score", "type": ["null", "double"], "default": null}]}`
)

// evolveChildEnv, set, makes TestSchemaEvolutionChild run the pipeline file it names until
// it is killed: the process the evolution test kills.
const evolveChildEnv = "SLUICE_TEST_EVOLVE_CHILD"

// TestSchemaEvolutionChild is the process TestKafkaToIcebergSchemaEvolution starts and kills;
// it does nothing otherwise.
func TestSchemaEvolutionChild(t *testing.T) {
	path := os.Getenv(evolveChildEnv)
	if path == "" {
		t.Skip("the process TestKafkaToIcebergSchemaEvolution starts and kills")
	}
	_, err := execute(t, path, runner.RunConfig{})
	t.Fatalf("the run ended before it was killed: %v", err)
}

// TestKafkaToIcebergSchemaEvolution: records on a real topic gain a field mid-stream, when the
// producer registers a newer version of the subject (Confluent wire format, sluice's test
// registry). ReadFromKafka with follow_schema_updates and WriteToIceberg with
// schema_evolution: add_columns add the column; the process is SIGKILLed after the column was
// added and before the epoch's commit; the next run resumes, and iceberg-go's scan reads every
// record once, the earlier rows (and the older writer's later ones) null in the new column.
func TestKafkaToIcebergSchemaEvolution(t *testing.T) {
	if testing.Short() {
		t.Skip("about 1-2 s: runs and kills a process")
	}
	dir := t.TempDir()
	// The broker lives in this process, so that it outlives the killed run.
	t.Cleanup(embedded.CloseDirs)
	addr, err := embedded.AddrIn(filepath.Join(dir, "kafka"))
	if err != nil {
		t.Fatal(err)
	}
	g := confluenttest.NewServer(t)
	topic := fmt.Sprintf("evolve-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	subject := confluent.SubjectFor(topic)
	v1 := g.Add(subject, sr.Schema{Schema: eventV1})
	produce := func(id int, schema string, from, to int, score bool) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			m := map[string]any{"id": int64(i), "name": fmt.Sprintf("n%d", i)}
			if score {
				m["score"] = float64(i) / 2
			}
			body, err := avro.Marshal(avro.MustParse(schema), m)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: confluenttest.WireValue(id, body)})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pipeline := func(interval string) string {
		return pipelineFile(t, dir, fmt.Sprintf(`
pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: AVRO
      confluent_schema_registry_url: %s
      follow_schema_updates: true
      auto_offset_reset_config: earliest
  sink:
    type: WriteToIceberg
    config:
      table: db.events
      schema_evolution: add_columns
      catalog_properties: {type: sql, uri: '{dir}/catalog.db', warehouse: '{dir}/wh'}
options: {name: evolve, checkpoint_interval: %s}
`, addr, topic, g.URL, interval))
	}

	produce(v1, eventV1, 0, 20, false)
	if _, err := execute(t, pipeline("50ms"), runner.RunConfig{StopAtEnd: true}); err != nil {
		t.Fatal(err)
	}
	cat := sqlCatalog(t, dir)
	if n := committedRecords(t, cat); n != 20 {
		t.Fatalf("the first run committed %d records, want 20", n)
	}

	// The producer's schema gains score; an older producer goes on writing v1.
	v2 := g.Add(subject, sr.Schema{Schema: eventV2})
	produce(v2, eventV2, 20, 40, true)
	produce(v1, eventV1, 40, 50, false)

	// A run whose epochs last 3 s: it is killed as soon as the column is in the table, before
	// the epoch that needed it commits.
	child := exec.Command(os.Args[0], "-test.run=^TestSchemaEvolutionChild$")
	child.Env = append(os.Environ(), evolveChildEnv+"="+pipeline("3s"))
	var childOut bytes.Buffer
	child.Stdout, child.Stderr = &childOut, &childOut
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !hasColumn(t, cat, "score") {
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			_ = child.Wait()
			t.Fatalf("no column score within 20 s; the run said:\n%s", childOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if n := committedRecords(t, cat); n != 20 {
		t.Fatalf("the kill landed after the epoch's commit (%d records committed, want 20); the run said:\n%s", n, childOut.String())
	}

	if _, err := execute(t, pipeline("50ms"), runner.RunConfig{StopAtEnd: true}); err != nil {
		t.Fatal(err)
	}
	got := scanScores(t, cat)
	if len(got) != 50 {
		t.Errorf("%d distinct ids, want 50", len(got))
	}
	for id := range int64(50) {
		var want any
		if id >= 20 && id < 40 {
			want = float64(id) / 2
		}
		if s, ok := got[id]; !ok || len(s) != 1 || s[0] != want {
			t.Errorf("id %d: scores %v, want once %v", id, s, want)
		}
	}
}

// sqlCatalog opens the test's SQLite catalog with iceberg-go, independently of the sink.
func sqlCatalog(t *testing.T, dir string) catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(context.Background(), "sluice", iceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri":       "file:" + filepath.Join(dir, "catalog.db") + "?_pragma=busy_timeout(10000)",
		"warehouse": "file://" + filepath.Join(dir, "wh"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

func loadEvents(t *testing.T, cat catalog.Catalog) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "events"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func hasColumn(t *testing.T, cat catalog.Catalog, name string) bool {
	_, ok := loadEvents(t, cat).Schema().FindFieldByName(name)
	return ok
}

// committedRecords is the table's record count as of its current snapshot.
func committedRecords(t *testing.T, cat catalog.Catalog) int {
	snap := loadEvents(t, cat).CurrentSnapshot()
	if snap == nil || snap.Summary == nil {
		return 0
	}
	n := 0
	fmt.Sscan(snap.Summary.Properties["total-records"], &n)
	return n
}

// scanScores reads the table with iceberg-go's scan: the scores of each id (nil for null).
func scanScores(t *testing.T, cat catalog.Catalog) map[int64][]any {
	t.Helper()
	at, err := loadEvents(t, cat).Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	out := map[int64][]any{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		idx := rec.Schema().FieldIndices("score")
		if len(idx) == 0 {
			t.Fatalf("the table read has no column score: %v", rec.Schema())
		}
		sc := rec.Column(idx[0]).(*array.Float64)
		for i := range int(rec.NumRows()) {
			var v any
			if !sc.IsNull(i) {
				v = sc.Value(i)
			}
			out[ids.Value(i)] = append(out[ids.Value(i)], v)
		}
	}
	return out
}
