package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
	sluiceavro "github.com/sluicehq/sluice/schemas/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

var people = schemas.New(
	schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
	schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true})

// testSource is the Position.Source of the rows the sink tests write: row i is at offset i.
const testSource = "file:in.jsonl"

// harness drives a WriteToKafka sink the way the runner does.
type harness struct {
	t        *testing.T
	topic    string
	pipeline string
	name     string
	delivery component.Delivery
	lanes    int
}

func newHarness(t *testing.T, delivery component.Delivery) *harness {
	return &harness{t: t, topic: newTopic(t, 2), delivery: delivery, lanes: 2, name: "out",
		pipeline: fmt.Sprintf("p-%s-%d", runID, topicSeq.Add(1))}
}

// open builds and opens a JSON sink and returns it with the checkpoint it restored.
func (h *harness) open(extra ...string) (*sink, *component.Checkpoint) {
	h.t.Helper()
	src := "type: WriteToKafka\nconfig:\n" + config(h.topic, append([]string{"format: JSON"}, extra...)...)
	b := componenttest.Env{File: testFile, Name: h.name, Options: component.Options{Delivery: h.delivery}}.Build(h.t, "", src, people)
	if b.Err() != nil {
		h.t.Fatal(b.Err())
	}
	s := b.Component.(*sink)
	cp, err := s.Open(context.Background(), component.SinkInfo{Pipeline: h.pipeline, Lanes: h.lanes})
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.t.Cleanup(func() { s.Close(context.Background()) })
	return s, cp
}

func row(i int) schemas.Row { return schemas.Row{int64(i), fmt.Sprintf("n%d", i)} }

func line(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }

// batch returns rows [from, to) of one lane.
func batch(from, to int) *schemas.Batch {
	b := &schemas.Batch{Schema: people}
	for i := from; i < to; i++ {
		b.Rows = append(b.Rows, row(i))
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	return b
}

// write writes rows [from, to), spread over the lanes in batches.
func (h *harness) write(s *sink, from, to int) {
	h.t.Helper()
	for i := from; i < to; i += 3 {
		lane := (i / 3) % h.lanes
		if err := s.Writer(lane).Write(context.Background(), batch(i, min(i+3, to))); err != nil {
			h.t.Fatalf("write: %v", err)
		}
	}
}

func (h *harness) flush(s *sink, epoch uint64) {
	h.t.Helper()
	h.driver().Flush(s, epoch)
}

func (h *harness) checkpoint(epoch uint64, next int) component.Commit {
	return h.driver().Checkpoint(epoch, next)
}

func (h *harness) commit(s *sink, epoch uint64, next int) {
	h.t.Helper()
	h.driver().Commit(s, epoch, next)
}

func (h *harness) driver() connectortest.Driver {
	return connectortest.Driver{T: h.t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
}

// visible returns the sorted values a consumer of the topic sees.
func (h *harness) visible(committed bool) []string {
	h.t.Helper()
	got := all(readTopic(h.t, h.topic, committed))
	sort.Strings(got)
	return got
}

// want returns the sorted lines of rows [0, n).
func want(n int) []string {
	var out []string
	for i := range n {
		out = append(out, line(i))
	}
	sort.Strings(out)
	return out
}

func (h *harness) checkVisible(committed bool, n int) {
	h.t.Helper()
	if got := h.visible(committed); !slices.Equal(got, want(n)) {
		h.t.Errorf("visible (read_committed %v): %d records %q, want rows 0..%d once each", committed, len(got), got, n-1)
	}
}

// exactly_once: the records are invisible to read_committed consumers until Commit, and the
// next Open returns the committed checkpoint.
func TestExactlyOnceCommit(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s, cp := h.open()
	if cp != nil {
		t.Fatalf("a new sink restored %+v", cp)
	}
	h.write(s, 0, 10)
	h.flush(s, 1)
	h.checkVisible(false, 10) // written, in the open transaction
	h.checkVisible(true, 0)
	h.commit(s, 1, 10)
	h.checkVisible(true, 10)
	h.write(s, 10, 13)
	h.flush(s, 2)
	h.commit(s, 2, 13)
	h.commit(s, 2, 13) // again: nothing happens
	h.checkVisible(true, 13)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, cp = h.open()
	if cp == nil || cp.Epoch != 2 || !cp.Next.Equal(h.checkpoint(2, 13).Next) || cp.Pipeline != h.pipeline {
		t.Errorf("restored %+v, want epoch 2 at offset 13", cp)
	}
}

// A sink dropped after Flush without Commit (a crash) leaves nothing of its epoch visible; the
// next Open fences it, returns the previous checkpoint, and running the epoch again gives
// every record exactly once.
func TestExactlyOnceCrashAfterFlush(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s1, _ := h.open()
	h.write(s1, 0, 5)
	h.flush(s1, 1)
	h.commit(s1, 1, 5)
	h.write(s1, 5, 12)
	h.flush(s1, 2)
	s1.cl.Close() // the crash: the transaction stays open at the broker

	s2, cp := h.open()
	if cp == nil || cp.Epoch != 1 || !cp.Next.Equal(h.checkpoint(1, 5).Next) {
		t.Fatalf("restored %+v, want epoch 1", cp)
	}
	h.checkVisible(true, 5)
	h.write(s2, 5, 12) // the runner resumes from the checkpoint's offsets
	h.flush(s2, 2)
	h.commit(s2, 2, 12)
	h.checkVisible(true, 12)
}

// A failed commit (here, a crash in the middle of it) aborts the epoch: the next run replays it.
func TestExactlyOnceFailedCommit(t *testing.T) {
	for _, step := range []string{stepFlushed, stepEnd} {
		t.Run(step, func(t *testing.T) {
			h := newHarness(t, component.ExactlyOnce)
			s1, _ := h.open()
			h.write(s1, 0, 4)
			h.flush(s1, 1)
			s1.hook = func(at string) error {
				if at == step {
					return errors.New("injected failure")
				}
				return nil
			}
			if err := s1.Commit(context.Background(), h.checkpoint(1, 4)); err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("commit: %v, want the injected failure", err)
			}
			if err := s1.Writer(0).Write(context.Background(), batch(4, 5)); err == nil {
				t.Error("a sink whose commit failed accepted more rows")
			}
			s1.Close(context.Background())
			h.checkVisible(true, 0)
			s2, cp := h.open()
			if cp != nil {
				t.Fatalf("restored %+v after a failed first commit", cp)
			}
			h.write(s2, 0, 4)
			h.flush(s2, 1)
			h.commit(s2, 1, 4)
			h.checkVisible(true, 4)
		})
	}
}

// A second sink with the same transactional ID fences the first: the first can no longer
// commit, and only the second's records become visible.
func TestExactlyOnceFencing(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	zombie, _ := h.open()
	h.write(zombie, 0, 6)
	h.flush(zombie, 1)
	s, cp := h.open()
	if cp != nil {
		t.Fatalf("restored %+v", cp)
	}
	if err := zombie.Commit(context.Background(), h.checkpoint(1, 6)); err == nil {
		t.Fatal("the fenced sink committed")
	}
	h.write(s, 0, 3)
	h.flush(s, 1)
	h.commit(s, 1, 3)
	h.checkVisible(true, 3)
}

// Rows a lane writes after its Flush(E) wait for Commit(E) and go into the next transaction;
// a Write during the commit waits for it.
func TestExactlyOnceWriteAfterFlush(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s, _ := h.open()
	ctx := context.Background()
	w := s.Writer(0)
	if err := w.Write(ctx, batch(0, 3)); err != nil {
		t.Fatal(err)
	}
	h.flush(s, 1)
	if err := w.Write(ctx, batch(3, 5)); err != nil { // epoch 2, held
		t.Fatal(err)
	}
	done := make(chan error, 1)
	s.hook = func(step string) error {
		if step == stepEnd {
			go func() { done <- w.Write(ctx, batch(5, 6)) }()
			select {
			case err := <-done:
				return fmt.Errorf("a write finished during the commit: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		return nil
	}
	h.commit(s, 1, 3)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.checkVisible(true, 3)
	h.flush(s, 2)
	h.commit(s, 2, 6)
	h.checkVisible(true, 6)
}

// An epoch the runner did not commit (no source sent records) is flushed again: rows written
// after the first Flush belong to it.
func TestExactlyOnceRepeatedFlush(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s, _ := h.open()
	h.flush(s, 1)
	h.write(s, 0, 7)
	h.flush(s, 1)
	h.commit(s, 1, 7)
	h.checkVisible(true, 7)
}

// A commit with a lane that wrote without flushing is refused: those rows are not covered by
// the checkpoint.
func TestExactlyOnceUnflushedLane(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s, _ := h.open()
	if err := s.Writer(1).Write(context.Background(), batch(0, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Writer(0).Flush(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), h.checkpoint(1, 2)); err == nil || !strings.Contains(err.Error(), "did not flush") {
		t.Fatalf("commit: %v", err)
	}
	h.checkVisible(true, 0)
}

// at_least_once: Flush makes the lane's records visible; Commit writes the checkpoint.
func TestAtLeastOnce(t *testing.T) {
	h := newHarness(t, component.AtLeastOnce)
	s, cp := h.open()
	if cp != nil {
		t.Fatalf("restored %+v", cp)
	}
	h.write(s, 0, 8)
	h.flush(s, 1)
	h.checkVisible(true, 8)
	h.commit(s, 1, 8)
	s.Close(context.Background())
	_, cp = h.open()
	if cp == nil || cp.Epoch != 1 || !cp.Next.Equal(h.checkpoint(1, 8).Next) {
		t.Errorf("restored %+v, want epoch 1", cp)
	}
}

// Two sinks of one pipeline keep their checkpoints apart.
func TestCheckpointsPerSink(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	a, _ := h.open()
	h.name = "other"
	b, _ := h.open()
	h.flush(a, 1)
	h.commit(a, 1, 3)
	h.flush(b, 1)
	h.commit(b, 1, 9)
	for name, next := range map[string]int{"out": 3, "other": 9} {
		h.name = name
		_, cp := h.open()
		if cp == nil || !cp.Next.Equal(h.checkpoint(1, next).Next) {
			t.Errorf("sink %s restored %+v, want offset %d", name, cp, next)
		}
	}
}

// writeOnce builds a WriteToKafka with the config lines for rows of schema, and writes and
// commits rows in one epoch of one lane.
func (h *harness) writeOnce(config string, schema *schemas.Schema, rows []schemas.Row) {
	h.t.Helper()
	s := buildFor(h.t, h.delivery, "type: WriteToKafka\nconfig:\n"+config, schema).Component.(*sink)
	ctx := context.Background()
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: h.pipeline, Lanes: 1}); err != nil {
		h.t.Fatal(err)
	}
	defer s.Close(ctx)
	b := &schemas.Batch{Schema: schema, Rows: rows}
	for i := range rows {
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	if err := s.Writer(0).Write(ctx, b); err != nil {
		h.t.Fatal(err)
	}
	if err := s.Writer(0).Flush(ctx, 1); err != nil {
		h.t.Fatal(err)
	}
	if err := s.Commit(ctx, h.checkpoint(1, len(rows))); err != nil {
		h.t.Fatal(err)
	}
}

// Every format writes what ReadFromKafka of the same format reads back as the same rows.
func TestWriteFormatsRoundTrip(t *testing.T) {
	at := time.UnixMicro(1700000000123456).UTC()
	events := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
		schemas.Field{Name: "at", Type: schemas.Type{Kind: schemas.Timestamp}},
		schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}})
	raw := schemas.New(schemas.Field{Name: "payload", Type: schemas.Type{Kind: schemas.Bytes}})
	cases := []struct {
		name, write, read string
		schema            *schemas.Schema
		rows              []schemas.Row
	}{
		{"raw", "format: RAW", "format: RAW", raw, []schemas.Row{{[]byte("a")}, {[]byte{0, 1, 2}}}},
		{"json", "format: JSON", "format: JSON\n  schema: {type: object, properties: {id: {type: integer}, name: {type: string}, at: {type: string, format: date-time}, tags: {type: array, items: {type: string}}}, required: [id, at, tags]}",
			events, []schemas.Row{{int64(1), "a", at, []any{"x", "y"}}, {int64(2), nil, at, []any{}}}},
		{"avro-derived", "format: AVRO", "", events, []schemas.Row{{int64(1), "a", at, []any{"x"}}, {int64(2), nil, at, []any{}}}},
	}
	derived, err := sluiceavro.SchemaFor(events)
	if err != nil {
		t.Fatal(err)
	}
	cases[2].read = "format: AVRO\n  schema: '" + derived + "'"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, component.ExactlyOnce)
			h.writeOnce(config(h.topic, c.write), c.schema, c.rows)
			_, out, _, err := readSource(t, config(h.topic, c.read, "auto_offset_reset_config: earliest"), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := out.Rows(component.Main)
			sort.Slice(got, func(i, j int) bool { return fmt.Sprint(got[i]) < fmt.Sprint(got[j]) })
			sort.Slice(c.rows, func(i, j int) bool { return fmt.Sprint(c.rows[i]) < fmt.Sprint(c.rows[j]) })
			if !reflect.DeepEqual(got, c.rows) {
				t.Errorf("read back %v, want %v", got, c.rows)
			}
		})
	}
}

// A row that cannot be encoded stops the pipeline at its position, or goes to the error output
// when the runner hands the writer its Emit.
func TestWriteErrors(t *testing.T) {
	h := newHarness(t, component.AtLeastOnce)
	schema := `'{"type": "record", "name": "P", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}'`
	src := "type: WriteToKafka\nconfig:\n" + config(h.topic, "format: AVRO", "schema: "+schema, "error_handling: {output: bad}")
	s := buildFor(t, component.AtLeastOnce, src, people).Component.(*sink)
	ctx := context.Background()
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: h.pipeline, Lanes: 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	b := batch(0, 3)
	b.Rows[1] = schemas.Row{int64(1), nil}
	var re *component.RowError
	if err := s.Writer(0).Write(ctx, b); !errors.As(err, &re) || re.Pos.Offset != 1 || !strings.Contains(err.Error(), `"name" is null`) {
		t.Fatalf("Write: %v, want a RowError at offset 1", err)
	}
	out := componenttest.Emitted{}
	if err := s.Writer(0).(*laneWriter).WriteWithErrors(ctx, b, out.Emit); err != nil {
		t.Fatal(err)
	}
	if err := s.Writer(0).Flush(ctx, 1); err != nil {
		t.Fatal(err)
	}
	bad := out.Rows("bad")
	if len(bad) != 1 || !reflect.DeepEqual(bad[0][0], map[string]any{"id": int64(1), "name": nil}) {
		t.Errorf("error rows %v", bad)
	}
	if got := all(readTopic(t, h.topic, true)); len(got) != 2 {
		t.Errorf("wrote %d records, want the 2 good ones", len(got))
	}
}

// The exactly-once producer's transactions outlast an epoch: their timeout follows the run's
// epoch length (a 60 s trigger of another sink must not time every transaction out), and an
// explicit transaction.timeout.ms that an epoch exceeds is refused at Open.
func TestTransactionTimeoutFollowsEpochs(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	b := componenttest.Env{File: testFile, Name: h.name}.Build(t, "", "type: WriteToKafka\nconfig:\n"+config(h.topic, "format: JSON"), people)
	s := b.Component.(*sink)
	info := component.SinkInfo{Pipeline: h.pipeline, Lanes: 1, EpochInterval: 2 * time.Minute}
	if _, err := s.Open(context.Background(), info); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	cl, _, _ := s.state()
	if got := cl.OptValue(kgo.TransactionTimeout); got != 6*time.Minute+30*time.Second {
		t.Errorf("transaction timeout %v for 2 min epochs, want 6m30s", got)
	}

	b = componenttest.Env{File: testFile, Name: h.name}.Build(t, "", "type: WriteToKafka\nconfig:\n"+
		config(h.topic, "format: JSON", "producer_config_updates: {transaction.timeout.ms: '60000'}"), people)
	short := b.Component.(*sink)
	if _, err := short.Open(context.Background(), info); err == nil || !strings.Contains(err.Error(), "is not longer than an epoch") {
		t.Errorf("a transaction timeout shorter than an epoch: %v", err)
	}
}

// A batch larger than a value buffer (valueChunk) is written across several buffers: every
// row arrives once, whole, as written.
func TestWriteBatchAcrossBuffers(t *testing.T) {
	h := newHarness(t, component.ExactlyOnce)
	s, _ := h.open()
	pad := strings.Repeat("x", 1000)
	b := &schemas.Batch{Schema: people}
	var wantLines []string
	const n = 1200 // ~1.2 MB of values: 5 buffers
	for i := range n {
		name := fmt.Sprintf("n%d-%s", i, pad)
		b.Rows = append(b.Rows, schemas.Row{int64(i), name})
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
		wantLines = append(wantLines, fmt.Sprintf(`{"id":%d,"name":%q}`, i, name))
	}
	if n*len(pad) < 4*valueChunk {
		t.Fatalf("the batch (%d bytes) does not span several buffers of %d", n*len(pad), valueChunk)
	}
	if err := s.Writer(0).Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	h.flush(s, 1)
	h.commit(s, 1, n)
	got := h.visible(true)
	sort.Strings(wantLines)
	if !slices.Equal(got, wantLines) {
		t.Fatalf("read %d records, want the %d written, each once and whole", len(got), n)
	}
}
