package iceberg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// withScore is connectortest.Schema with a nullable field score: the rows' schema after a
// source's writer added a field mid-run.
var withScore = schemas.New(append(slices.Clone(connectortest.Schema.Fields),
	schemas.Field{Name: "score", Type: typ(schemas.Float64), Nullable: true})...)

func scoreRow(i int) schemas.Row { return schemas.Row{int64(i), fmt.Sprintf("n%d", i), float64(i) / 2} }

// scores reads the table's column score by id with iceberg-go's scan; nil where null.
func scores(t *testing.T, w warehouse, tableName string) map[int64]any {
	t.Helper()
	at := w.scan(tableName)
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	out := map[int64]any{}
	for tr.Next() {
		rec := tr.RecordBatch()
		idx := rec.Schema().FieldIndices("score")
		if len(idx) == 0 {
			t.Fatalf("the table has no column score: %v", rec.Schema())
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		sc := rec.Column(idx[0]).(*array.Float64)
		for i := range int(rec.NumRows()) {
			if _, dup := out[ids.Value(i)]; dup {
				t.Errorf("id %d twice", ids.Value(i))
			}
			out[ids.Value(i)] = nil
			if !sc.IsNull(i) {
				out[ids.Value(i)] = sc.Value(i)
			}
		}
	}
	return out
}

// checkScores fails t unless the table holds ids [0, n) once each, with score i/2 for the ids
// in wide and null for the others.
func checkScores(t *testing.T, w warehouse, tableName string, n int, wide func(id int) bool) {
	t.Helper()
	got := scores(t, w, tableName)
	if len(got) != n {
		t.Errorf("%d rows, want %d", len(got), n)
	}
	for id := range n {
		var want any
		if wide(id) {
			want = float64(id) / 2
		}
		if v, ok := got[int64(id)]; !ok || v != want {
			t.Errorf("row %d: score %v (present %v), want %v", id, v, ok, want)
		}
	}
}

// TestSchemaEvolutionMidRun: rows gain a field while the sink runs, in the middle of an epoch,
// on two lanes, for an unpartitioned and a partitioned table: with schema_evolution:
// add_columns the table gains the column before the epoch's commit, whose snapshot's schema
// has it; the rows written before read null there, and rows of the old schema written after
// the change too.
func TestSchemaEvolutionMidRun(t *testing.T) {
	for _, extra := range [][]string{nil, {`partition_fields: ["bucket(id, 4)"]`}} {
		t.Run(fmt.Sprint(len(extra) > 0), func(t *testing.T) {
			w := newWarehouse(t)
			h := harness{t: t, pipeline: "midrun", lanes: 2}
			ctx := context.Background()
			s := w.build(connectortest.Schema, "db.mid", append(extra, "schema_evolution: add_columns")...)
			h.open(s, "")
			defer s.Close(ctx)
			h.write(s, connectortest.Schema, 0, 0, 10, idRow)
			h.write(s, withScore, 0, 10, 20, scoreRow)
			h.write(s, connectortest.Schema, 0, 20, 30, idRow)
			h.flush(s, 1)
			h.driver().Commit(s, 1, 30)
			h.write(s, withScore, 0, 30, 40, scoreRow)
			h.flush(s, 2)
			h.driver().Commit(s, 2, 40)
			checkScores(t, w, "db.mid", 40, func(id int) bool { return id >= 10 && id < 20 || id >= 30 })
			meta := w.load("db.mid").Metadata()
			for _, snap := range meta.Snapshots() {
				sc := schemaByID(meta.Schemas(), *snap.SchemaID)
				if _, ok := sc.FindFieldByName("score"); !ok {
					t.Errorf("snapshot %d's schema (id %d) has no column score", snap.SnapshotID, *snap.SchemaID)
				}
			}
		})
	}
}

func schemaByID(all []*iceberg.Schema, id int) *iceberg.Schema {
	for _, s := range all {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// TestSchemaEvolutionMidRunCrash: a crash after the schema change and before the epoch's
// commit leaves the column in the table and none of the epoch's rows; the restarted sink,
// built for the old rows, replays the epoch and the table holds each row once, the new
// field's values where the rows had them.
func TestSchemaEvolutionMidRunCrash(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "midcrash", lanes: 1}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.crash", "schema_evolution: add_columns")
	h.open(s, "")
	h.write(s, connectortest.Schema, 0, 0, 5, idRow)
	h.flush(s, 1)
	h.driver().Commit(s, 1, 5)
	crash := errors.New("killed")
	s.hook = func(step string) error {
		if step == stepEvolved {
			return crash
		}
		return nil
	}
	h.write(s, connectortest.Schema, 0, 5, 8, idRow)
	b := &schemas.Batch{Schema: withScore, Rows: []schemas.Row{scoreRow(8)}, Pos: []schemas.Position{{Source: testSource, Offset: 8}}}
	if err := s.Writer(0).Write(ctx, b); !errors.Is(err, crash) {
		t.Fatalf("write after the crash point: %v", err)
	}
	s.Close(ctx)
	if _, ok := w.load("db.crash").Schema().FindFieldByName("score"); !ok {
		t.Fatal("the schema change is not in the table")
	}

	s = w.build(connectortest.Schema, "db.crash", "schema_evolution: add_columns")
	if cp := h.open(s, ""); cp == nil || cp.Epoch != 1 {
		t.Fatalf("reopened at %+v, want epoch 1", cp)
	}
	defer s.Close(ctx)
	h.write(s, connectortest.Schema, 0, 5, 8, idRow)
	h.write(s, withScore, 0, 8, 12, scoreRow)
	h.flush(s, 2)
	h.driver().Commit(s, 2, 12)
	checkScores(t, w, "db.crash", 12, func(id int) bool { return id >= 8 })
}

// TestSchemaEvolutionWidens: an int column and a float column made by another tool are
// widened to long and double when the rows hold integers and numbers there (Iceberg's type
// promotion), so that a value beyond int's range is written; a field whose type changed
// (string into a long column) or a new required field stops the write, naming the column.
func TestSchemaEvolutionWidens(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "widen", lanes: 1}
	ctx := context.Background()
	narrow := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "count", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 4, Name: "ratio", Type: iceberg.PrimitiveTypes.Float32})
	ident, _ := identifier("db.widen")
	cat := w.catalog()
	if err := cat.CreateNamespace(ctx, ident[:1], nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, ident, narrow); err != nil {
		t.Fatal(err)
	}
	s := w.build(connectortest.Schema, "db.widen", "schema_evolution: add_columns")
	h.open(s, "")
	defer s.Close(ctx)
	h.write(s, connectortest.Schema, 0, 0, 2, idRow)
	counted := schemas.New(append(slices.Clone(connectortest.Schema.Fields),
		schemas.Field{Name: "count", Type: typ(schemas.Int64), Nullable: true},
		schemas.Field{Name: "ratio", Type: typ(schemas.Float64), Nullable: true})...)
	h.write(s, counted, 0, 2, 4, func(i int) schemas.Row { return schemas.Row{int64(i), "n", int64(math.MaxInt32) + int64(i), 0.1} })
	h.flush(s, 1)
	h.driver().Commit(s, 1, 4)
	sc := w.load("db.widen").Schema()
	for name, want := range map[string]iceberg.Type{"count": iceberg.PrimitiveTypes.Int64, "ratio": iceberg.PrimitiveTypes.Float64} {
		if f, _ := sc.FindFieldByName(name); !f.Type.Equals(want) {
			t.Errorf("column %s is %s, want %s", name, f.Type, want)
		}
	}
	at := w.scan("db.widen")
	var counts []any
	for _, c := range at.Column(at.Schema().FieldIndices("count")[0]).Data().Chunks() {
		for i := range c.Len() {
			counts = append(counts, c.GetOneForMarshal(i))
		}
	}
	if len(counts) != 4 || !slices.Contains(counts, any(int64(math.MaxInt32)+3)) {
		t.Errorf("counts %v, want two nulls and 2147483649, 2147483650", counts)
	}

	for _, c := range []struct {
		name, want string
		fields     []schemas.Field
		values     []any
	}{
		{"type change", `column "count"`, []schemas.Field{{Name: "count", Type: typ(schemas.String), Nullable: true},
			{Name: "extra", Type: typ(schemas.String), Nullable: true}}, []any{"x", "e"}},
		{"required", `column "rank" is not in the table and the rows declare it required`,
			[]schemas.Field{{Name: "rank", Type: typ(schemas.Int64)}}, []any{int64(1)}},
	} {
		sc := schemas.New(append(slices.Clone(connectortest.Schema.Fields), c.fields...)...)
		b := &schemas.Batch{Schema: sc, Rows: []schemas.Row{append(schemas.Row{int64(9), "n"}, c.values...)},
			Pos: []schemas.Position{{Source: testSource, Offset: 9}}}
		err := s.Writer(0).Write(ctx, b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "schema changed while running") {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
	// A refused change changes nothing, not even the column that could have been added.
	if got := topNames(w.load("db.widen").Schema()); !slices.Equal(got, []string{"id", "name", "count", "ratio"}) {
		t.Errorf("after refused changes: columns %v", got)
	}
}
