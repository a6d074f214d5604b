package acceptance

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/connectors/iceberg"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIcebergUpsertExample runs examples/iceberg_upsert.yaml (Create of Debezium-style
// envelopes -> MapToFields -> WriteToIceberg upsert) with the binary and reads the table back
// with iceberg-go: one row per customer, the latest, and the deleted one gone.
func TestIcebergUpsertExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(binary, "run", filepath.Join(repoRoot(t), "examples", "iceberg_upsert.yaml"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	w := icebergWarehouse{dir: filepath.Join(dir, "out", "iceberg_upsert")}
	got := upsertState(t, w, "crm.customers", "city")
	want := map[int64]string{1: "Bergen", 3: "Lima"}
	if !maps.Equal(got, want) {
		t.Fatalf("table crm.customers holds %v, want %v", got, want)
	}
}

// upsertState scans the table with iceberg-go (which applies the equality deletes) and returns
// each id's value of column col as text; a key seen twice fails t.
func upsertState(t *testing.T, w icebergWarehouse, tableName, col string) map[int64]string {
	t.Helper()
	tbl, err := w.load(t, w.catalog(t), tableName)
	if err != nil {
		t.Fatalf("load %s: %v", tableName, err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", col)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", tableName, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 64<<10)
	defer tr.Release()
	out := map[int64]string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		vals := rec.Column(rec.Schema().FieldIndices(col)[0])
		for i := range int(rec.NumRows()) {
			if _, dup := out[ids.Value(i)]; dup {
				t.Fatalf("key %d is in table %s twice", ids.Value(i), tableName)
			}
			out[ids.Value(i)] = vals.ValueStr(i)
		}
	}
	return out
}

// cdcEvent is one change of the crash test's input: op c, u or d of key id; v is the event's
// index, the value its row carries.
type cdcEvent struct {
	id int64
	op string
	v  int
}

// cdcEvents makes n change events over keys ids, deterministically: a key's first event
// creates it, later ones update (3 in 4) or delete it; one event in 20 starts a run of 6
// updates of one key in a row (many changes of a key within one epoch). It returns the events
// and the final state computed from them: each live key's last value.
func cdcEvents(n, keys int) ([]cdcEvent, map[int64]string) {
	rng := rand.New(rand.NewPCG(22, 1))
	state := map[int64]string{}
	var out []cdcEvent
	add := func(id int64, op string) {
		e := cdcEvent{id: id, op: op, v: len(out)}
		out = append(out, e)
		if op == "d" {
			delete(state, id)
		} else {
			state[id] = strconv.Itoa(e.v)
		}
	}
	for len(out) < n {
		id := int64(rng.IntN(keys))
		_, live := state[id]
		switch {
		case !live:
			add(id, "c")
		case rng.IntN(20) == 0:
			for range 6 {
				add(id, "u")
			}
		case rng.IntN(4) == 0:
			add(id, "d")
		default:
			add(id, "u")
		}
	}
	return out[:n], state
}

// envelope is the Debezium-style JSON of e: before and after rows, and op.
func (e cdcEvent) envelope() string {
	row := fmt.Sprintf(`{"id": %d, "name": "n%d", "v": %d}`, e.id, e.id, e.v)
	switch e.op {
	case "c":
		return `{"op": "c", "before": null, "after": ` + row + `}`
	case "d":
		return fmt.Sprintf(`{"op": "d", "before": {"id": %d, "name": "n%d", "v": -1}, "after": null}`, e.id, e.id)
	}
	return fmt.Sprintf(`{"op": "u", "before": {"id": %d, "name": "n%d", "v": -1}, "after": %s}`, e.id, e.id, row)
}

// produceCDC produces evs to topic keyed by id (so a key's changes stay in one partition, in
// order) in bursts over about d, and returns a channel that yields the outcome.
func produceCDC(t *testing.T, addr, topic string, evs []cdcEvent, d time.Duration) <-chan error {
	cl := devClient(t, addr, kgo.ProducerLinger(5*time.Millisecond))
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const burst = 1000
		tick := time.NewTicker(d / time.Duration(len(evs)/burst))
		defer tick.Stop()
		for chunk := range slices.Chunk(evs, burst) {
			<-tick.C
			recs := make([]*kgo.Record, len(chunk))
			for i, e := range chunk {
				recs[i] = &kgo.Record{Topic: topic, Key: []byte(strconv.FormatInt(e.id, 10)), Value: []byte(e.envelope())}
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

// cdcPipeline reads Debezium-style envelopes from topic, maps them to rows and upserts them.
func cdcPipeline(addr, topic string, w icebergWarehouse, tableName string) string {
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
      schema:
        type: object
        properties:
          op: {type: string}
          before: {type: object, properties: {id: {type: integer}, name: {type: string}, v: {type: integer}}}
          after: {type: object, properties: {id: {type: integer}, name: {type: string}, v: {type: integer}}}
  transforms:
    - type: MapToFields
      config:
        fields:
          id: "(after ?? before).id ?? -1"
          name: after?.name
          v: after?.v
          op: op
%soptions:
  name: cdc_crash
`, addr, topic, w.sink(tableName, "200ms", "drop: [op]", `upsert: {key: [id], delete: "op == 'd'"}`))
}

// TestCrashCDCToIceberg: 100k Debezium-style change events over 10k keys (creates, updates,
// deletes, runs of updates of one key) flow into a 4-partition topic keyed by id while a
// Kafka -> MapToFields -> WriteToIceberg upsert pipeline is SIGKILLed 12 times, many kills
// inside commits; after a final --stop-at-end run the table read with iceberg-go equals the
// final state computed from the events: every live key once with its last value, no deleted
// key.
func TestCrashCDCToIceberg(t *testing.T) {
	skipIfShort(t)
	const tableName, topic = "crm.state", "cdc"
	addr := startDevKafka(t, "--topic", topic+":4").addr
	dir := t.TempDir()
	w := icebergWarehouse{dir: dir}
	evs, want := cdcEvents(100_000, 10_000)
	produced := produceCDC(t, addr, topic, evs, 20*time.Second)
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, cdcPipeline(addr, topic, w, tableName))

	cat := w.catalog(t)
	landed := map[string]int{}
	kills, finished := killer{pipeline: pipeline, minDelay: 100 * time.Millisecond, spread: 900 * time.Millisecond,
		env:      []string{iceberg.PauseEnv + "=80ms"},
		progress: func() int { return w.committedRows(t, cat, tableName) },
		onKill:   func(stderr string) { landed[killPoint(stderr)]++ },
	}.run(t, 12)
	if finished {
		t.Fatalf("run %d ended by itself though its source has no end", kills+1)
	}
	if err := <-produced; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	if res, err := exec.Command(binary, "run", pipeline, "--stop-at-end").CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, res)
	}
	got := upsertState(t, w, tableName, "v")
	wrong := 0
	for id, v := range want {
		if got[id] != v {
			if wrong < 5 {
				t.Errorf("key %d: table has %q, want %q", id, got[id], v)
			}
			wrong++
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			if wrong < 5 {
				t.Errorf("key %d is in the table but was deleted", id)
			}
			wrong++
		}
	}
	if wrong > 0 {
		t.Fatalf("%d keys wrong of %d live keys", wrong, len(want))
	}
	if landed["after files, before commit"]+landed["after commit, before reply"] == 0 {
		t.Errorf("no kill landed in a commit (%v): the test did not test what it claims", landed)
	}
	t.Logf("%d kills (%v), %d change events, %d live keys checked, 0 wrong, 0 duplicates", kills, landed, len(evs), len(want))
}
