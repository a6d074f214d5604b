package iceberg

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// routeSchema is the input of the routing tests: rows go to db.events_{country}.
var routeSchema = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "name", Type: typ(schemas.String)},
	schemas.Field{Name: "country", Type: typ(schemas.String), Nullable: true},
)

// country is the routing value of row i: three countries (one needing sanitizing), and from
// row 60 on some rows of a fourth.
func country(i int) string {
	if i >= 60 && i%5 == 0 {
		return "DE"
	}
	return []string{"US", "fr", "Costa Rica"}[i%3]
}

func countryRow(i int) schemas.Row { return schemas.Row{int64(i), "n", country(i)} }

// countryTable is the table row i must land in.
func countryTable(i int) string {
	return "db.events_" + strings.ReplaceAll(strings.ToLower(country(i)), " ", "_")
}

// wantIDs returns, for each table, the ids of rows [0, n) routed to it.
func wantIDs(n int) map[string][]int64 {
	out := map[string][]int64{}
	for i := range n {
		out[countryTable(i)] = append(out[countryTable(i)], int64(i))
	}
	return out
}

// checkRouted fails t unless every table holds exactly the ids of rows [0, n) routed to it.
func checkRouted(t *testing.T, w warehouse, n int) {
	t.Helper()
	for name, want := range wantIDs(n) {
		if got := sorted(w.ids(name)); !slices.Equal(got, want) {
			t.Errorf("table %s holds ids %v, want %v (each once)", name, got, want)
		}
	}
}

// TestRouting: rows go to the table their country names, created on first use without the
// dropped routing field; a reopened sink returns the epoch's checkpoint, and status reads it.
func TestRouting(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "route", lanes: 2}
	ctx := context.Background()
	s := w.build(routeSchema, "db.events_{country}", "drop: [country]", `partition_fields: ["bucket(id, 2)"]`)
	if cp := h.open(s, ""); cp != nil {
		t.Fatalf("a new pipeline opened at %+v", cp)
	}
	h.write(s, routeSchema, 0, 0, 30, countryRow)
	h.flush(s, 1)
	h.driver().Commit(s, 1, 30)
	checkRouted(t, w, 30)
	for _, name := range []string{"db.events_us", "db.events_fr", "db.events_costa_rica"} {
		tbl := w.load(name)
		if got := topNames(tbl.Schema()); !slices.Equal(got, []string{"id", "name"}) {
			t.Errorf("table %s has columns %v, want id and name (country dropped after routing)", name, got)
		}
		if spec := tbl.Spec(); spec.NumFields() != 1 {
			t.Errorf("table %s is not partitioned by bucket(id, 2): %v", name, spec)
		}
	}
	if !strings.Contains(s.Summary(), "to 3 tables routed by db.events_{country}") {
		t.Errorf("summary: %s", s.Summary())
	}
	s.Close(ctx)

	s = w.build(routeSchema, "db.events_{country}", "drop: [country]")
	cp := h.open(s, "")
	if cp == nil || cp.Epoch != 1 || !cp.Next.Equal(schemas.Offsets{testSource: {0: 30}}) {
		t.Fatalf("reopened at %+v, want epoch 1 at offset 30", cp)
	}
	s.Close(ctx)
	status, _, err := w.build(routeSchema, "db.events_{country}").ReadCheckpoint(ctx, "route")
	if err != nil || status == nil || !status.Next.Equal(cp.Next) {
		t.Fatalf("status read %+v, %v", status, err)
	}
}

// TestRoutingCrash stops the commit of epoch 2 at each table and step, as a crash would,
// reopens, replays from the checkpoint as the runner does, and checks that every table
// holds each of its rows once; a fourth table appears after the crash.
func TestRoutingCrash(t *testing.T) {
	// Epoch 2 commits db.events_costa_rica, db.events_fr, db.events_us in that order.
	for _, c := range []struct {
		name      string
		step      string
		table     int    // the table (1-3) whose commit crashes at step
		wantEpoch uint64 // the reopened checkpoint's epoch and offset
		wantNext  int64
	}{
		{"before the first table", stepBefore, 1, 1, 30},
		{"between two tables", stepBefore, 2, 2, 30},
		{"after the second table", stepSent, 2, 2, 30},
		{"after the last table", stepSent, 3, 2, 60},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWarehouse(t)
			h := harness{t: t, pipeline: "crash", lanes: 2}
			ctx := context.Background()
			build := func() *sink { return w.build(routeSchema, "db.events_{country}", "drop: [country]") }
			s := build()
			h.open(s, "")
			h.write(s, routeSchema, 0, 0, 30, countryRow)
			h.flush(s, 1)
			h.driver().Commit(s, 1, 30)
			h.write(s, routeSchema, 0, 30, 60, countryRow)
			h.flush(s, 2)
			calls := map[string]int{}
			s.hook = func(step string) error {
				if calls[step]++; step == c.step && calls[step] == c.table {
					return errors.New("crash")
				}
				return nil
			}
			if err := s.Commit(ctx, h.driver().Checkpoint(2, 60)); err == nil {
				t.Fatal("the crashed commit succeeded")
			}
			s.Close(ctx)

			s = build()
			cp := h.open(s, "")
			defer s.Close(ctx)
			if cp == nil || cp.Epoch != c.wantEpoch || cp.Next[testSource][0] != c.wantNext {
				t.Fatalf("reopened at %+v, want epoch %d at offset %d", cp, c.wantEpoch, c.wantNext)
			}
			// The runner resumes from the checkpoint; the sink drops what a table holds.
			h.write(s, routeSchema, 0, int(cp.Next[testSource][0]), 90, countryRow)
			h.flush(s, cp.Epoch+1)
			h.driver().Commit(s, cp.Epoch+1, 90)
			checkRouted(t, w, 90)
			s.Close(ctx)
			s = build()
			defer s.Close(ctx)
			if cp := h.open(s, ""); cp == nil || cp.Epoch != c.wantEpoch+1 || cp.Next[testSource][0] != 90 {
				t.Fatalf("after the replay: checkpoint %+v, want epoch %d at offset 90", cp, c.wantEpoch+1)
			}
		})
	}
}

// TestRoutingNoTable: a row whose routing field is null or empty stops the pipeline at its
// position, or goes to the error output with error_handling.
func TestRoutingNoTable(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "null", lanes: 1}
	ctx := context.Background()
	row := func(i int) schemas.Row {
		switch i {
		case 3:
			return schemas.Row{int64(i), "n", nil}
		case 4:
			return schemas.Row{int64(i), "n", ""}
		}
		return countryRow(i)
	}
	batch := &schemas.Batch{Schema: routeSchema}
	for i := range 6 {
		batch.Rows = append(batch.Rows, row(i))
		batch.Pos = append(batch.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}

	s := w.build(routeSchema, "db.events_{country}")
	h.open(s, "")
	err := s.Writer(0).Write(ctx, batch)
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 3 || !strings.Contains(err.Error(), `record at test:in partition 0 offset 3: WriteToIceberg`) ||
		!strings.Contains(err.Error(), `routing field "country" is null or empty: the row names no table`) {
		t.Fatalf("a null routing field: %v", err)
	}
	s.Close(ctx)

	s = w.build(routeSchema, "db.events_{country}", "error_handling: {output: bad}")
	h.open(s, "")
	defer s.Close(ctx)
	var dead []schemas.Row
	emit := func(tag string, b *schemas.Batch) error {
		if tag != "bad" {
			t.Errorf("error rows on output %q", tag)
		}
		dead = append(dead, b.Rows...)
		return nil
	}
	if err := s.Writer(0).(component.ErrorWriter).WriteWithErrors(ctx, batch, emit); err != nil {
		t.Fatal(err)
	}
	h.flush(s, 1)
	h.driver().Commit(s, 1, 6)
	if len(dead) != 2 {
		t.Fatalf("%d error rows, want 2: %v", len(dead), dead)
	}
	for j, r := range dead {
		if src := r[2].(map[string]any); src["offset"] != int64(3+j) || !strings.Contains(r[1].(string), "is null or empty") {
			t.Errorf("error row %v", r)
		}
	}
	want := map[string][]int64{"db.events_us": {0}, "db.events_fr": {1}, "db.events_costa_rica": {2, 5}}
	for name, ids := range want {
		if got := sorted(w.ids(name)); !slices.Equal(got, ids) {
			t.Errorf("table %s holds %v, want %v", name, got, ids)
		}
	}
}

func TestRouteValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{"US", "us"}, {"Costa Rica", "costa_rica"}, {"a.b/c", "a_b_c"}, {"Zürich", "z_rich"}, {int64(-7), "_7"}, {true, "true"},
	} {
		if got, err := routeValue(c.v, schemas.String); err != nil || got != c.want {
			t.Errorf("routeValue(%v) = %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	if _, err := routeValue(strings.Repeat("x", maxRouteValue+1), schemas.String); err == nil {
		t.Error("an overlong value was accepted")
	}
}
