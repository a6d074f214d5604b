package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/bigquery"
	"github.com/twmb/franz-go/pkg/kgo"
)

// k2bRecord is a record the tests produce, and what should become of it.
type k2bRecord struct {
	value     []byte
	partition int32
	offset    int64
	ts        time.Time
	// dead is "" for a record that must reach the table, else a text the dead letter's error
	// message must hold; decoding says whether ReadFromKafka (true) or the sink refuses it.
	dead     string
	decoding bool
}

// produceK2B produces recs to topic, each to its partition, and records their offsets.
func produceK2B(t *testing.T, addr, topic string, recs []*k2bRecord) {
	t.Helper()
	cl := devClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	krs := make([]*kgo.Record, len(recs))
	of := make(map[*kgo.Record]*k2bRecord, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: topic, Partition: r.partition, Value: r.value, Timestamp: r.ts}
		of[krs[i]] = r
	}
	res := cl.ProduceSync(ctx, krs...) // results come in the order they complete
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, pr := range res {
		of[pr.Record].offset = pr.Record.Offset
	}
}

// TestKafkaToBigQueryTemplate is the acceptance of the built-in Kafka_To_BigQuery: Google's
// gcloud --parameters (with sluice's endpoint parameters added) run it against `sluice dev
// kafka` and the loopback Storage Write API server, over a topic where good records are mixed
// with malformed JSON, a value that is not UTF-8, and records that decode but that the table
// refuses (a null in a REQUIRED column, a value out of a NUMERIC(4, 0) column's range). The
// table must hold exactly the good records, once each, and the dead-letter table every bad
// one, with its payload, error message, source position (attributes) and Kafka timestamp.
func TestKafkaToBigQueryTemplate(t *testing.T) {
	t.Parallel()
	const topic, n = "k2b_events", 300
	addr := startDevKafka(t, "--topic", topic+":2").addr
	bq := startBigQuery(t)
	err := bq.CreateTable(bqProject, "ds", "k2b_events", bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType, Required: true},
		{Name: "name", Type: bigquery.StringFieldType, Required: true},
		{Name: "qty", Type: bigquery.NumericFieldType, Precision: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	recs := make([]*k2bRecord, n)
	for i := range recs {
		r := &k2bRecord{partition: int32(i/10) % 2, ts: base.Add(time.Duration(i) * time.Millisecond)}
		switch i % 20 {
		case 3:
			r.value, r.dead, r.decoding = fmt.Appendf(nil, `{"id": %d, "name": "user-%d"`, i, i), "JSON", true
		case 7:
			r.value, r.dead, r.decoding = fmt.Appendf(nil, `{"id": "x%d", "name": "user-%d"}`, i, i), "id", true
		case 11:
			r.value, r.dead, r.decoding = fmt.Appendf(nil, "\xff\xfe %d not JSON", i), "JSON", true
		case 13:
			r.value, r.dead = fmt.Appendf(nil, `{"id": %d, "qty": 1}`, i), `field "name" is REQUIRED in the table, but the row holds null there`
		case 17:
			r.value, r.dead = fmt.Appendf(nil, `{"id": %d, "name": "user-%d", "qty": %d}`, i, i, 10000+i), "out of the range of NUMERIC(4, 0)"
		default:
			r.value = fmt.Appendf(nil, `{"id": %d, "name": "user-%d", "qty": %d}`, i, i, i%1000)
		}
		recs[i] = r
	}
	produceK2B(t, addr, topic, recs)

	dir := t.TempDir()
	params := strings.Join([]string{
		"^@^readBootstrapServerAndTopic=" + addr + ";" + topic,
		"writeMode=SINGLE_TABLE_NAME",
		"messageFormat=JSON",
		`jsonSchema={"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["id"]}`,
		"outputTableSpec=" + bqProject + ":ds.k2b_events",
		"createDisposition=CREATE_NEVER",
		"writeDisposition=WRITE_APPEND",
		"useBigQueryDLQ=true",
		"outputDeadletterTable=" + bqProject + ":ds.k2b_dead_letters",
		"kafkaReadOffset=earliest",
		"kafkaReadAuthenticationMode=NONE",
		"useStorageWriteApiAtLeastOnce=false",
		"numStorageWriteApiStreams=0",
		"storageWriteApiTriggeringFrequencySec=1",
		"useAutoSharding=true",
		"javascriptTextTransformReloadIntervalMinutes=0",
		"bigQueryEndpoint=" + bq.HTTPURL() + "/bigquery/v2/",
		"storageWriteApiEndpoint=" + bq.GRPCAddr(),
		"checkpointDir=" + filepath.Join(dir, "state"),
		"jobName=k2b_template",
	}, "@")
	cmd := exec.Command(binary, "run", "template:Kafka_To_BigQuery", "--parameters", params, "--stop-at-end")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sluice run template:Kafka_To_BigQuery: %v\n%s", err, out)
	}
	const bad = n / 20 * 5 // kinds 3, 7, 11, 13 and 17 of every 20
	for _, want := range []string{fmt.Sprintf("read %d records", n), fmt.Sprintf("%d records to error outputs", bad),
		fmt.Sprintf("WriteDeadLetters: wrote %d rows", bad), fmt.Sprintf("WriteToBigQuery: wrote %d rows", n-bad)} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run's output lacks %q:\n%s", want, out)
		}
	}

	rows, err := bq.Rows(bqProject, "ds", "k2b_events")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, row := range rows {
		id, _ := row["id"].(int64)
		qty, _ := row["qty"].(*big.Rat)
		if seen[id]++; id < 0 || id >= n || recs[id].dead != "" || row["name"] != fmt.Sprintf("user-%d", id) ||
			qty == nil || qty.Cmp(big.NewRat(id%1000, 1)) != 0 {
			t.Errorf("the table holds %v, which is not a good record as produced", row)
		}
	}
	good := 0
	for i, r := range recs {
		if r.dead == "" {
			good++
			if seen[int64(i)] != 1 {
				t.Errorf("good record %d is in the table %d times, want once", i, seen[int64(i)])
			}
		}
	}

	dead := checkDeadLetters(t, bq, "k2b_dead_letters", topic, recs)
	if len(rows) != good || dead != n-good {
		t.Errorf("the table holds %d rows and the dead letters %d, want %d and %d", len(rows), dead, good, n-good)
	}
	t.Logf("%d records: %d in the table, %d dead letters", n, len(rows), dead)
}

// checkDeadLetters checks that the dead-letter table holds one row for each bad record of
// recs, in Google's schema, and returns how many rows it holds.
func checkDeadLetters(t *testing.T, bq bqServer, table, topic string, recs []*k2bRecord) int {
	t.Helper()
	rows, err := bq.Rows(bqProject, "ds", table)
	if err != nil {
		t.Fatal(err)
	}
	byPos := map[[2]int64]*k2bRecord{}
	for _, r := range recs {
		byPos[[2]int64{int64(r.partition), r.offset}] = r
	}
	found := map[*k2bRecord]bool{}
	for _, row := range rows {
		attrs := map[string]string{}
		list, _ := row["attributes"].([]any)
		for _, a := range list {
			kv, _ := a.(map[string]any)
			k, _ := kv["key"].(string)
			v, _ := kv["value"].(string)
			attrs[k] = v
		}
		var p, o int64
		if _, err := fmt.Sscan(attrs["partition"]+" "+attrs["offset"], &p, &o); err != nil || attrs["topic"] != topic {
			t.Errorf("dead letter %v: attributes %v do not name the record's topic, partition and offset", row, attrs)
			continue
		}
		r := byPos[[2]int64{p, o}]
		if r == nil || r.dead == "" || found[r] {
			t.Errorf("dead letter at partition %d offset %d: no such bad record, or twice: %v", p, o, row)
			continue
		}
		found[r] = true
		msg, _ := row["errorMessage"].(string)
		str, _ := row["payloadString"].(string)
		raw, _ := row["payloadBytes"].([]byte)
		if !strings.Contains(msg, r.dead) {
			t.Errorf("dead letter of %q: errorMessage %q does not say %q", r.value, msg, r.dead)
		}
		if ts, _ := row["timestamp"].(time.Time); !ts.Equal(r.ts) {
			t.Errorf("dead letter of %q: timestamp %v, want the record's %v", r.value, row["timestamp"], r.ts)
		}
		if row["stacktrace"] != nil {
			t.Errorf("dead letter of %q: stacktrace %q, want null", r.value, row["stacktrace"])
		}
		if r.decoding {
			if string(raw) != string(r.value) || str != validText(r.value) {
				t.Errorf("dead letter of undecodable %q: payloadBytes %q, payloadString %q; want the value as it was", r.value, raw, str)
			}
			continue
		}
		var got, want map[string]any
		if err := json.Unmarshal([]byte(str), &got); err != nil || json.Unmarshal(r.value, &want) != nil ||
			got["id"] != want["id"] || got["name"] != want["name"] || got["qty"] != want["qty"] || string(raw) != str {
			t.Errorf("dead letter of refused %q: payloadString %q, payloadBytes %q; want the row as JSON in both", r.value, str, raw)
		}
	}
	for _, r := range recs {
		if r.dead != "" && !found[r] {
			t.Errorf("bad record %q (partition %d offset %d) is not in the dead letters", r.value, r.partition, r.offset)
		}
	}
	return len(rows)
}

// validText is b as text, each byte that is not UTF-8 replaced by U+FFFD (as encoding/json
// does).
func validText(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		s.WriteRune(r)
		b = b[size:]
	}
	return s.String()
}

// TestKafkaToBigQueryExample runs examples/kafka_to_bigquery.yaml against `sluice dev kafka`
// and the loopback Storage Write API server, with its machine-specific values given as Jinja
// variables: priced orders reach shop.orders, once each; unreadable ones and those the table
// refuses (no customer, which a pre-created table requires) reach shop.orders_dead_letters
// with their topic, partition and offset.
func TestKafkaToBigQueryExample(t *testing.T) {
	t.Parallel()
	const topic, n = "k2b_orders", 60
	addr := startDevKafka(t, "--topic", topic+":1").addr
	bq := startBigQuery(t)
	if err := bq.CreateDataset(bqProject, "shop"); err != nil {
		t.Fatal(err)
	}
	err := bq.CreateTable(bqProject, "shop", "orders", bigquery.Schema{
		{Name: "order_id", Type: bigquery.IntegerFieldType, Required: true},
		{Name: "customer", Type: bigquery.StringFieldType, Required: true},
		{Name: "item", Type: bigquery.StringFieldType},
		{Name: "quantity", Type: bigquery.IntegerFieldType, Required: true},
		{Name: "unit_price", Type: bigquery.FloatFieldType, Required: true},
		{Name: "ts", Type: bigquery.TimestampFieldType},
		{Name: "total", Type: bigquery.FloatFieldType},
	})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*k2bRecord, n)
	for i := range recs {
		r := &k2bRecord{ts: time.UnixMilli(1714557600000 + int64(i)).UTC()}
		switch i % 10 {
		case 4:
			r.value, r.dead = fmt.Appendf(nil, `{"order_id": %d, "customer": "c%d", "quantity": "two", "unit_price": 1.5}`, i, i), "quantity"
		case 8:
			r.value, r.dead = fmt.Appendf(nil, `{"order_id": %d, "quantity": 2, "unit_price": 1.5}`, i), `field "customer" is REQUIRED`
		default:
			r.value = fmt.Appendf(nil, `{"order_id": %d, "customer": "c%d", "item": "lamp", "quantity": %d, "unit_price": 2.5, "ts": "2024-05-01T10:00:00Z"}`, i, i, i%5+1)
		}
		recs[i] = r
	}
	produceK2B(t, addr, topic, recs)

	dir := t.TempDir()
	vars, _ := json.Marshal(map[string]string{"bootstrap_servers": addr, "topic": topic, "project": bqProject,
		"bigquery_endpoint": bq.HTTPURL() + "/bigquery/v2/", "storage_endpoint": bq.GRPCAddr()})
	cmd := exec.Command(binary, "run", filepath.Join(repoRoot(t), "examples", "kafka_to_bigquery.yaml"),
		"--jinja_variables", string(vars), "--stop-at-end")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sluice run examples/kafka_to_bigquery.yaml: %v\n%s", err, out)
	}

	rows, err := bq.Rows(bqProject, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, row := range rows {
		id, _ := row["order_id"].(int64)
		q, _ := row["quantity"].(int64)
		if seen[id]++; id < 0 || id >= n || recs[id].dead != "" || row["total"] != float64(q)*2.5 {
			t.Errorf("the table holds %v, which is not a good order, priced", row)
		}
	}
	dead, err := bq.Rows(bqProject, "shop", "orders_dead_letters")
	if err != nil {
		t.Fatal(err)
	}
	var deadAt []int64
	for _, row := range dead {
		off, _ := row["offset"].(int64)
		msg, _ := row["error"].(string)
		if off < 0 || off >= n || recs[off].dead == "" || !strings.Contains(msg, recs[off].dead) ||
			row["topic"] != "kafka:"+topic || row["partition"] != int64(0) || !strings.Contains(row["record"].(string), fmt.Sprintf(`"order_id": %d`, off)) {
			t.Errorf("dead letter %v is not a bad order with its position and error", row)
		}
		deadAt = append(deadAt, off)
	}
	slices.Sort(deadAt)
	var wantDead []int64
	for i, r := range recs {
		if r.dead == "" && seen[int64(i)] != 1 {
			t.Errorf("order %d is in the table %d times, want once", i, seen[int64(i)])
		}
		if r.dead != "" {
			wantDead = append(wantDead, int64(i))
		}
	}
	if !slices.Equal(deadAt, wantDead) {
		t.Errorf("dead letters at offsets %v, want %v", deadAt, wantDead)
	}
}
