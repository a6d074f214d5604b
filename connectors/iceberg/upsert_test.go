package iceberg

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// cdcSchema is the schema of the upsert tests' rows: a key, a value and the change's kind.
var cdcSchema = schemas.New(
	schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
	schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
	schemas.Field{Name: "op", Type: schemas.Type{Kind: schemas.String}},
)

// ev is one change event: op "d" deletes id, any other writes name.
type ev struct {
	id   int64
	name string
	op   string
}

func (e ev) row() schemas.Row {
	var name any = e.name
	if e.op == "d" {
		name = nil // as a Debezium delete's after: only the key is known
	}
	return schemas.Row{e.id, name, e.op}
}

// upsertConfig is the upsert block the tests use, without the table's dropped op column.
var upsertConfig = []string{"drop: [op]", "upsert: {key: [id], delete: \"op == 'd'\"}"}

// buildSink builds the sink src describes, with expressions, as the runner does; it returns
// the sink or the config errors.
func buildSink(t *testing.T, src string, in *schemas.Schema) (*sink, error) {
	t.Helper()
	d, root := componenttest.Env{File: testFile}.Parse(t, src)
	spec, _ := component.Lookup("WriteToIceberg")
	ctx := &component.Context{Decoder: d, Type: "WriteToIceberg", Name: "WriteToIceberg", Pos: d.At(root),
		Config: component.MappingValue(root, "config"), Exprs: exprs{lines: d.Lines},
		Inputs: []component.Input{{Name: "in", Schema: in}}}
	c := spec.Build(ctx)
	if err := d.Diags.Err(); err != nil {
		return nil, err
	}
	return c.(*sink), nil
}

func (w warehouse) upsertSink(tableName string, extra ...string) *sink {
	w.t.Helper()
	s, err := buildSink(w.t, w.config(tableName, append(slices.Clone(upsertConfig), extra...)...), cdcSchema)
	if err != nil {
		w.t.Fatalf("build: %v", err)
	}
	return s
}

// openUpsert builds and opens an upsert sink of pipeline on table db.cdc, closed when t ends.
func (w warehouse) openUpsert(pipeline string, extra ...string) *sink {
	w.t.Helper()
	s := w.upsertSink("db.cdc", extra...)
	if _, err := s.Open(context.Background(), component.SinkInfo{Pipeline: pipeline, Lanes: 2}); err != nil {
		w.t.Fatalf("open: %v", err)
	}
	w.t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// cdcWriter writes change events into a sink: each partition on its own lane (partition p on
// lane p), offsets counted per partition, as the runner would.
type cdcWriter struct {
	t    *testing.T
	next map[int32]int64
}

func (c *cdcWriter) write(s *sink, p int32, evs ...ev) {
	c.t.Helper()
	if c.next == nil {
		c.next = map[int32]int64{}
	}
	b := &schemas.Batch{Schema: cdcSchema}
	for _, e := range evs {
		b.Rows = append(b.Rows, e.row())
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Partition: p, Offset: c.next[p]})
		c.next[p]++
	}
	if err := s.Writer(int(p)).Write(context.Background(), b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// flush flushes both lanes of s for epoch.
func (c *cdcWriter) flush(s *sink, epoch uint64) error {
	for lane := range 2 {
		if err := s.Writer(lane).Flush(context.Background(), epoch); err != nil {
			return err
		}
	}
	return nil
}

// commit flushes both lanes for epoch and commits it at the offsets written so far.
func (c *cdcWriter) commit(s *sink, epoch uint64) error {
	if err := c.flush(s, epoch); err != nil {
		return err
	}
	next := schemas.Offsets{testSource: {}}
	for p, o := range c.next {
		next[testSource][p] = o
	}
	return s.Commit(context.Background(), component.Commit{Checkpoint: component.Checkpoint{Pipeline: "cdc", Epoch: epoch, Next: next}})
}

// apply is the independent model: the state after the events, in order.
func apply(state map[int64]string, evs ...ev) {
	for _, e := range evs {
		if e.op == "d" {
			delete(state, e.id)
		} else {
			state[e.id] = e.name
		}
	}
}

// tableState reads the table back with iceberg-go's scan (which applies equality deletes)
// and fails on a key seen twice.
func (w warehouse) keyed(tableName string) map[int64]string {
	w.t.Helper()
	at := w.scan(tableName)
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	out := map[int64]string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		names := rec.Column(rec.Schema().FieldIndices("name")[0]).(*array.String)
		for i := range int(rec.NumRows()) {
			if _, dup := out[ids.Value(i)]; dup {
				w.t.Fatalf("key %d is in the table twice", ids.Value(i))
			}
			out[ids.Value(i)] = names.Value(i)
		}
	}
	return out
}

func sameState(t *testing.T, got, want map[int64]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("table state\n got  %v\n want %v", got, want)
	}
}

// epochs are the change events of the upsert tests, per epoch and partition (0 and 1).
var epochs = [][2][]ev{
	{ // inserts
		{{0, "a0", "c"}, {2, "a2", "c"}, {4, "a4", "c"}, {6, "a6", "c"}, {8, "a8", "c"}},
		{{1, "a1", "c"}, {3, "a3", "c"}, {5, "a5", "c"}, {7, "a7", "c"}, {9, "a9", "c"}},
	},
	{ // updates, a delete, a key updated many times, a key deleted and re-inserted, an insert
		{{0, "b0", "u"}, {2, "b2", "u"}, {4, "x", "d"}, {6, "b6.1", "u"}, {6, "b6.2", "u"}, {6, "b6.3", "u"}, {6, "b6.4", "u"}, {8, "x", "d"}, {8, "b8", "c"}},
		{{1, "b1", "u"}, {11, "a11", "c"}, {1, "b1.2", "u"}, {3, "x", "d"}},
	},
	{ // a key deleted an epoch ago comes back; one inserted and deleted in an epoch; a re-insert of a deleted key
		{{4, "c4", "c"}, {12, "c12", "c"}, {12, "x", "d"}, {0, "x", "d"}},
		{{3, "c3", "c"}, {5, "c5", "u"}, {5, "x", "d"}, {5, "c5.2", "c"}},
	},
}

// TestUpsertLatestPerKey: after each epoch's commit the table read with iceberg-go's scan
// holds exactly the latest row of every key, one snapshot per epoch with equality deletes;
// ReadFromIceberg reads the same. Also for a table bucketed by its key, on a Hadoop catalog,
// and with small row groups.
func TestUpsertLatestPerKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hadoop bool
		extra  []string
	}{
		{"unpartitioned", false, nil},
		{"bucket(id)", false, []string{`partition_fields: ["bucket(id, 4)"]`}},
		{"hadoop catalog", true, nil},
		// Rows deleted by position in files of several row groups.
		{"row groups of 2 rows", false, []string{`table_properties: {write.parquet.row-group-limit: "2"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWarehouse(t)
			if tc.hadoop {
				w = newHadoopWarehouse(t)
			}
			s := w.openUpsert("cdc", tc.extra...)
			tbl := w.load("db.cdc")
			if ids := tbl.Schema().IdentifierFieldIDs; len(ids) != 1 || tbl.Metadata().Version() < 2 {
				t.Fatalf("the created table has identifier fields %v, version %d; want [id], 2+", ids, tbl.Metadata().Version())
			}
			state := map[int64]string{}
			c := &cdcWriter{t: t}
			for e, parts := range epochs {
				for p, evs := range parts {
					c.write(s, int32(p), evs...)
					apply(state, evs...)
				}
				if err := c.commit(s, uint64(e+1)); err != nil {
					t.Fatal(err)
				}
				sameState(t, w.keyed("db.cdc"), state)
			}
			tbl = w.load("db.cdc")
			if n := len(tbl.Metadata().Snapshots()); n != len(epochs) {
				t.Fatalf("%d snapshots, want one per epoch (%d)", n, len(epochs))
			}
			snap := tbl.CurrentSnapshot()
			if snap.Summary.Operation != table.OpOverwrite || snap.Summary.Properties["sluice.epoch"] != "3" {
				t.Fatalf("the last snapshot is %s with epoch %q; want an overwrite (a row delta) carrying epoch 3", snap.Summary.Operation, snap.Summary.Properties["sluice.epoch"])
			}
			if files, err := describeTable(context.Background(), tbl); err != nil || files.deletes == 0 {
				t.Fatalf("no delete files in the table (%v)", err)
			}
			if tc.hadoop {
				return // w.source reads the SQL catalog
			}
			src := w.source("ReadFromIceberg", "db.cdc")
			openSource(t, src, nil)
			rows, _ := readToEnd(t, src)
			read := map[int64]string{}
			for _, r := range rows {
				if _, dup := read[r[0].(int64)]; dup {
					t.Fatalf("ReadFromIceberg read key %d twice", r[0])
				}
				read[r[0].(int64)] = r[1].(string)
			}
			sameState(t, read, state)
		})
	}
}

// TestUpsertCrashReplay: a crash before an epoch's commit is sent, or after it was, and the
// replay of what the checkpoint does not cover, give the same state as no crash.
func TestUpsertCrashReplay(t *testing.T) {
	for _, step := range []string{stepBefore, stepSent} {
		t.Run(step, func(t *testing.T) {
			w := newWarehouse(t)
			ctx := context.Background()
			s := w.upsertSink("db.cdc")
			cp, err := s.Open(ctx, component.SinkInfo{Pipeline: "cdc", Lanes: 2})
			if err != nil || cp != nil {
				t.Fatalf("open: %+v, %v", cp, err)
			}
			state := map[int64]string{}
			c := &cdcWriter{t: t}
			for p, evs := range epochs[0] {
				c.write(s, int32(p), evs...)
				apply(state, evs...)
			}
			if err := c.commit(s, 1); err != nil {
				t.Fatal(err)
			}
			for p, evs := range epochs[1] {
				c.write(s, int32(p), evs...)
			}
			s.hook = func(at string) error {
				if at == step {
					return errors.New("crash")
				}
				return nil
			}
			if err := c.commit(s, 2); err == nil {
				t.Fatal("the crashed commit succeeded")
			}
			s.Close(ctx)

			s = w.upsertSink("db.cdc")
			cp, err = s.Open(ctx, component.SinkInfo{Pipeline: "cdc", Lanes: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			// The runner replays, per partition, the events after the checkpoint's offsets.
			c = &cdcWriter{t: t, next: map[int32]int64{}}
			for p := range int32(2) {
				c.next[p] = cp.Next[testSource][p]
			}
			epoch := cp.Epoch
			for e := 1; e < len(epochs); e++ {
				for _, evs := range epochs[e] {
					apply(state, evs...)
				}
				if int64(offsetOf(0, e+1)) <= c.next[0] && int64(offsetOf(1, e+1)) <= c.next[1] {
					continue // committed before the crash
				}
				epoch++
				for p := range int32(2) {
					c.write(s, p, partitionEvents(p)[c.next[p]:offsetOf(p, e+1)]...)
				}
				if err := c.commit(s, epoch); err != nil {
					t.Fatal(err)
				}
				sameState(t, w.keyed("db.cdc"), state)
			}
			if epoch != 3 {
				t.Fatalf("replayed up to epoch %d, want 3", epoch)
			}
		})
	}
}

// partitionEvents are the events of partition p in all epochs.
func partitionEvents(p int32) []ev {
	var out []ev
	for _, parts := range epochs {
		out = append(out, parts[p]...)
	}
	return out
}

// offsetOf is the offset of partition p at which epochs[e] (0-based) starts.
func offsetOf(p int32, e int) int {
	n := 0
	for _, parts := range epochs[:e] {
		n += len(parts[p])
	}
	return n
}

// TestUpsertExistingTable: the key must be an existing table's identifier fields, with the
// position of upsert.key in the error.
func TestUpsertExistingTable(t *testing.T) {
	w := newWarehouse(t)
	ctx := context.Background()
	plain, err := buildSink(t, w.config("db.plain", "drop: [op]"), cdcSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Open(ctx, component.SinkInfo{Pipeline: "p"}); err != nil {
		t.Fatal(err)
	}
	plain.Close(ctx)
	s := w.upsertSink("db.plain")
	_, err = s.Open(ctx, component.SinkInfo{Pipeline: "cdc"})
	if err == nil || !strings.Contains(err.Error(), "pipeline.yaml:9:17: upsert.key [id] is not the table's identifier fields []") {
		t.Fatalf("an upsert into a table without identifier fields: %v", err)
	}
}

func TestUpsertConfigErrors(t *testing.T) {
	in := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "maybe", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
		schemas.Field{Name: "score", Type: schemas.Type{Kind: schemas.Float64}},
		schemas.Field{Name: "day", Type: schemas.Type{Kind: schemas.Date}},
		schemas.Field{Name: "op", Type: schemas.Type{Kind: schemas.String}},
	)
	w := newWarehouse(t)
	for _, c := range []struct{ extra, want string }{
		{"upsert: {key: [idd]}", `pipeline.yaml:8:18: upsert: key "idd" is not a field of the rows written (did you mean "id"?)`},
		{"upsert: {key: [id, maybe]}", `pipeline.yaml:8:22: upsert: key "maybe" is nullable`},
		{"upsert: {key: [score]}", `pipeline.yaml:8:18: upsert: key "score" is number, which cannot be an Iceberg identifier field`},
		{"upsert: {key: []}", `pipeline.yaml:8:17: upsert: key must name at least one column`},
		{"upsert: {key: [id], delete: \"op + 1\"}", `pipeline.yaml:8:35: invalid operation: + (mismatched types string and integer)`},
		{"upsert: {key: [id], delete: \"op\"}", `pipeline.yaml:8:32: upsert: delete must be a boolean expression, but "op" gives string`},
		{"upsert: {key: [id]}\n  drop: [id]", `upsert: key "id" is not a field of the rows written`},
		{"upsert: {key: [id]}\n  partition_fields: [\"day(day)\"]", `pipeline.yaml:9:22: upsert: partition field day_day uses column "day", which is not in upsert.key`},
		{"upsert: {delete: \"op == 'd'\"}", `key`},
	} {
		_, err := buildSink(t, w.config("db.t", c.extra), in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.extra, err, c.want)
		}
	}
	if _, err := buildSink(t, w.config("db.t", "upsert: {key: [id, day]}", "partition_fields: [\"bucket(id, 4)\"]"), in); err != nil {
		t.Errorf("a table partitioned by a key column: %v", err)
	}
}

// TestUpsertConcurrentWriter: another writer commits to the table between an epoch's writes
// and its commit; the commit is rebuilt on the new state and the table holds both writers'
// latest rows, the other writer's older row of a key this one changes deleted.
func TestUpsertConcurrentWriter(t *testing.T) {
	w := newWarehouse(t)
	ctx := context.Background()
	s := w.openUpsert("cdc")
	other := w.openUpsert("other")

	c := &cdcWriter{t: t}
	c.write(s, 0, ev{1, "mine", "c"}, ev{2, "mine", "c"})
	o := &cdcWriter{t: t}
	o.write(other, 0, ev{2, "theirs", "c"}, ev{3, "theirs", "c"})
	if err := o.flush(other, 1); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(ctx, component.Commit{Checkpoint: component.Checkpoint{Pipeline: "other", Epoch: 1, Next: schemas.Offsets{"other": {0: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.commit(s, 1); err != nil {
		t.Fatal(err)
	}
	if s.retries.Load() == 0 {
		t.Fatal("the commit was not rebuilt after the other writer's commit")
	}
	sameState(t, w.keyed("db.cdc"), map[int64]string{1: "mine", 2: "mine", 3: "theirs"})
}

// TestUpsertAddColumns: schema_evolution adds a column to an upsert table and keeps its
// identifier fields, so the sink with the wider rows opens it and upserts into it.
func TestUpsertAddColumns(t *testing.T) {
	w := newWarehouse(t)
	ctx := context.Background()
	s := w.upsertSink("db.cdc")
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "cdc", Lanes: 2}); err != nil {
		t.Fatal(err)
	}
	c := &cdcWriter{t: t}
	c.write(s, 0, ev{1, "a", "c"}, ev{2, "b", "c"})
	if err := c.commit(s, 1); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)

	wider := schemas.New(append(slices.Clone(cdcSchema.Fields), schemas.Field{Name: "city", Type: schemas.Type{Kind: schemas.String}, Nullable: true})...)
	s, err := buildSink(t, w.config("db.cdc", append(slices.Clone(upsertConfig), "schema_evolution: add_columns")...), wider)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Open(ctx, component.SinkInfo{Pipeline: "cdc", Lanes: 2})
	if err != nil {
		t.Fatalf("open after adding a column: %v", err)
	}
	defer s.Close(ctx)
	b := &schemas.Batch{Schema: wider, Rows: []schemas.Row{{int64(2), "b2", "u", "Oslo"}},
		Pos: []schemas.Position{{Source: testSource, Partition: 0, Offset: 2}}}
	if err := s.Writer(0).Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	c = &cdcWriter{t: t, next: map[int32]int64{0: 3}}
	if err := c.commit(s, cp.Epoch+1); err != nil {
		t.Fatal(err)
	}
	sameState(t, w.keyed("db.cdc"), map[int64]string{1: "a", 2: "b2"})
}

// TestUpsertEpochsInOneCommit: epochs flushed and committed together (an epoch flushed and
// never committed goes with the next Commit) are merged in epoch order: the later one wins.
func TestUpsertEpochsInOneCommit(t *testing.T) {
	w := newWarehouse(t)
	s := w.openUpsert("cdc")
	c := &cdcWriter{t: t}
	c.write(s, 0, ev{1, "x", "c"}, ev{2, "x", "c"})
	c.write(s, 1, ev{3, "x", "c"})
	if err := c.flush(s, 1); err != nil {
		t.Fatal(err)
	}
	c.write(s, 0, ev{1, "y", "u"}, ev{2, "x", "d"})
	c.write(s, 1, ev{3, "x", "d"}, ev{3, "z", "c"})
	if err := c.commit(s, 2); err != nil {
		t.Fatal(err)
	}
	sameState(t, w.keyed("db.cdc"), map[int64]string{1: "y", 3: "z"})
	if n := len(w.load("db.cdc").Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots, want the two epochs in one", n)
	}
}

// TestKeyValues: the key values the equality delete file gets are decoded from the keys the
// lanes encoded (keyOf), also for strings that look like an encoding, and keys of other
// types are not decoded (the lanes keep their values aside).
func TestKeyValues(t *testing.T) {
	up := &upsertPlan{key: []string{"a", "b", "c"}, keyIdx: []int{0, 1, 2}}
	for _, key := range []schemas.Row{
		{int64(-12), "x:s3:abc", []byte("")},
		{int64(0), "", []byte("i5:")},
	} {
		k, err := up.keyOf(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := keyValues(string(k), 3)
		if !ok || got[0] != key[0] || got[1] != key[1] || string(got[2].([]byte)) != string(key[2].([]byte)) {
			t.Errorf("key %v encoded %q decodes to %v, %v", key, k, got, ok)
		}
	}
	k, _ := up.keyOf(nil, schemas.Row{int64(1), "x", true})
	if _, ok := keyValues(string(k), 3); ok {
		t.Errorf("a boolean key (%q) decoded", k)
	}
}

// TestUpsertTimestampKey: a key that keyValues cannot decode (here id and a timestamp) keeps
// its values beside the change: a row superseded in its epoch is deleted by position, one of
// an earlier epoch by the equality delete on both columns.
func TestUpsertTimestampKey(t *testing.T) {
	in := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "at", Type: schemas.Type{Kind: schemas.Timestamp}},
		schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
	)
	w := newWarehouse(t)
	s, err := buildSink(t, w.config("db.ts", "upsert: {key: [id, at]}"), in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), component.SinkInfo{Pipeline: "cdc", Lanes: 2}); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	next := int64(0)
	write := func(rows ...schemas.Row) {
		b := &schemas.Batch{Schema: in}
		for _, r := range rows {
			b.Rows = append(b.Rows, r)
			b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: next})
			next++
		}
		if err := s.Writer(0).Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(epoch uint64) {
		for lane := range 2 {
			if err := s.Writer(lane).Flush(context.Background(), epoch); err != nil {
				t.Fatal(err)
			}
		}
		cp := component.Commit{Checkpoint: component.Checkpoint{Pipeline: "cdc", Epoch: epoch, Next: schemas.Offsets{testSource: {0: next}}}}
		if err := s.Commit(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
	}
	write(schemas.Row{int64(1), t0, "a"}, schemas.Row{int64(1), t0.Add(time.Second), "b"}, schemas.Row{int64(1), t0, "c"})
	commit(1)
	write(schemas.Row{int64(1), t0.Add(time.Second), "d"})
	commit(2)
	at := w.scan("db.ts")
	names := map[string]int{}
	for _, c := range at.Column(at.Schema().FieldIndices("name")[0]).Data().Chunks() {
		for i := range c.Len() {
			names[c.(*array.String).Value(i)]++
		}
	}
	if !maps.Equal(names, map[string]int{"c": 1, "d": 1}) {
		t.Fatalf("the table holds the rows %v, want c (key 1, t0) and d (key 1, t0+1s)", names)
	}
}
