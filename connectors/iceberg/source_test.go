package iceberg

import (
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// TestReadFromIceberg reads back every row of a table written in three snapshots, with the
// values of every column as they were written, and positions that count rows in order.
func TestReadFromIceberg(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.ev")
	w.appendEvents("db.ev", 0, 100)
	w.appendEvents("db.ev", 100, 250)
	w.appendEvents("db.ev", 250, 300)
	src, out, err := buildSource(t, w.readConfig("ReadFromIceberg", "db.ev"))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{id integer, name string?, score number?, tags array<string>?, ts timestamp?}" {
		t.Errorf("output schema %s", got)
	}
	openSource(t, src, nil)
	rows, pos := readToEnd(t, src)
	byID := map[int64]schemas.Row{}
	for _, r := range rows {
		byID[r[0].(int64)] = r
	}
	if len(rows) != 300 || len(byID) != 300 {
		t.Fatalf("%d rows, %d distinct ids, want 300", len(rows), len(byID))
	}
	for i := range 300 {
		if want := event(i); !reflect.DeepEqual(byID[int64(i)], want) {
			t.Fatalf("row %d: got %v, want %v", i, byID[int64(i)], want)
		}
	}
	for i, p := range pos {
		if p.Source != "iceberg:db.ev" || p.Offset != int64(i) || p.Partition != pos[0].Partition {
			t.Fatalf("position %d is %v", i, p)
		}
	}
	if seq := w.load("db.ev").CurrentSnapshot().SequenceNumber; int64(pos[0].Partition) != seq {
		t.Errorf("partition %d, want the snapshot's sequence number %d", pos[0].Partition, seq)
	}
	if next, _ := src.Offsets().Get("iceberg:db.ev", pos[0].Partition); next != 300 {
		t.Errorf("next offset %d, want 300", next)
	}
}

// TestReadFromIcebergSelect checks keep, drop and filter, in expr-lang and in SQL's spelling,
// also on a column that is not kept.
func TestReadFromIcebergSelect(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.sel")
	w.appendEvents("db.sel", 0, 50)
	for _, c := range []struct {
		extra   []string
		columns []string
		ids     []int64
	}{
		{[]string{"keep: [score, id]"}, []string{"id", "score"}, seq(0, 50)},
		{[]string{"drop: [tags, ts, name]"}, []string{"id", "score"}, seq(0, 50)},
		{[]string{"filter: id >= 10 && id < 13"}, []string{"id", "name", "score", "tags", "ts"}, seq(10, 13)},
		{[]string{`filter: "id >= 10 AND id < 20 AND name IS NULL"`, "keep: [id]"}, []string{"id"}, []int64{19}},
		{[]string{`filter: "name IS NOT NULL AND name = 'n7' OR score <> score"`, "drop: [name]"}, []string{"id", "score", "tags", "ts"}, []int64{7}},
		{[]string{`filter: "NOT (id > 2)"`}, []string{"id", "name", "score", "tags", "ts"}, seq(0, 3)},
	} {
		src, out, err := buildSource(t, w.readConfig("ReadFromIceberg", "db.sel", c.extra...))
		if err != nil {
			t.Fatalf("%v: %v", c.extra, err)
		}
		openSource(t, src, nil)
		rows, _ := readToEnd(t, src)
		if !slices.Equal(out.Names(), c.columns) {
			t.Errorf("%v: columns %v, want %v", c.extra, out.Names(), c.columns)
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			if len(r) != len(c.columns) {
				t.Fatalf("%v: row %v has %d values", c.extra, r, len(r))
			}
			v, _ := out.Index("id")
			ids[i] = r[v].(int64)
		}
		if !slices.Equal(sorted(ids), c.ids) {
			t.Errorf("%v: ids %v, want %v", c.extra, ids, c.ids)
		}
	}
}

// TestReadFromIcebergResume stops reading half way, appends to the table, and resumes from
// the offsets: the rest of the same snapshot follows, with no row twice or missing, and the
// rows appended since are not part of it.
func TestReadFromIcebergResume(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.res")
	for i := range 5 {
		w.appendEvents("db.res", i*1000, (i+1)*1000) // 5 files; batches of at most 2048 rows
	}
	src := w.source("ReadFromIceberg", "db.res")
	openSource(t, src, nil)
	first, _, err := readN(t, src, 2500, 30e9)
	if err != nil {
		t.Fatal(err)
	}
	from := src.Offsets()
	_ = src.Close()
	w.appendEvents("db.res", 5000, 6000)

	again := w.source("ReadFromIceberg", "db.res")
	openSource(t, again, from)
	rest, pos := readToEnd(t, again)
	if len(pos) > 0 && pos[0].Offset != int64(len(first)) {
		t.Errorf("resumed at offset %d, want %d", pos[0].Offset, len(first))
	}
	if got := sorted(append(idsOf(first), idsOf(rest)...)); !slices.Equal(got, seq(0, 5000)) {
		t.Fatalf("%d + %d rows, ids not 0..4999 once each", len(first), len(rest))
	}

	// A checkpoint beyond the snapshot's rows means the table is not what it was.
	bad := from.Clone()
	for p := range bad["iceberg:db.res"] {
		bad.Set("iceberg:db.res", p, 9999)
	}
	if err := w.source("ReadFromIceberg", "db.res").Open(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "which has 5000 rows") {
		t.Errorf("open beyond the end: %v", err)
	}
}

// TestReadFromIcebergConfigErrors: every problem is reported at its place in the file.
func TestReadFromIcebergConfigErrors(t *testing.T) {
	w := newWarehouse(t)
	w.create("db.cfg")
	for _, c := range []struct{ typ, extra, want string }{
		{"ReadFromIceberg", "keep: [id, nmae]", `pipeline.yaml:8:14: keep: no column "nmae" in table db.cfg (did you mean "name"?)`},
		{"ReadFromIceberg", "keep: [id]\n  drop: [name]", "keep and drop exclude each other"},
		{"ReadFromIceberg", "filter: name + 1", "pipeline.yaml:8:16: invalid operation: + (mismatched types string and integer)"},
		{"ReadFromIceberg", "filter: score * 2", `filter must be a boolean expression, but "score * 2" gives number`},
		{"ReadFromIceberg", "drop: [id, name, score, tags, ts]", "drop leaves no column to read"},
		{"ReadFromIcebergCDC", "poll_interval_seconds: soon", `"soon" is not a duration`},
		{"ReadFromIcebergCDC", "starting_strategy: oldest", `"starting_strategy" must be one of earliest, latest`},
		{"ReadFromIcebergCDC", "from_snapshot: 1\n  from_timestamp: 2", "from_snapshot and from_timestamp exclude each other"},
	} {
		_, _, err := buildSource(t, w.readConfig(c.typ, "db.cfg", c.extra))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.extra, err, c.want)
		}
	}
	mismatch := w.source("ReadFromIceberg", "db.cfg", "schema: {type: object, properties: {id: {type: string}}}")
	if err := mismatch.Open(t.Context(), nil); err == nil || !strings.Contains(err.Error(), `column "id" has type integer in the table, not string`) {
		t.Errorf("schema mismatch: %v", err)
	}
	_, _, err := buildSource(t, w.readConfig("ReadFromIceberg", "db.missing"))
	if err == nil || !strings.Contains(err.Error(), "pipeline.yaml:3:10: ReadFromIceberg: table db.missing does not exist") {
		t.Errorf("missing table: %v", err)
	}
	_, _, err = buildSource(t, "type: ReadFromIceberg\nconfig:\n  table: events\n")
	if err == nil || !strings.Contains(err.Error(), "pipeline.yaml:3:10:") || !strings.Contains(err.Error(), "want namespace.table") {
		t.Errorf("bare table: %v", err)
	}
}

func TestFromSQL(t *testing.T) {
	for in, want := range map[string]string{
		"a = 1 AND b <> 'x = y'":      "a == 1 and b != 'x = y'",
		"a >= 1 or NOT b IS NULL":     "a >= 1 or not b == nil",
		"name is not null and x != 2": "name != nil and x != 2",
		"brand = \"AND\" And a <= 3":  "brand == \"AND\" and a <= 3",
		"x == 1 && y":                 "x == 1 && y",
		"island = 'is' AND ORDER > 1": "island == 'is' and ORDER > 1",
	} {
		if got, _ := fromSQL(in); got != want {
			t.Errorf("fromSQL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArrowRoundTrip writes values with the sink's Arrow conversion and reads them back with
// the sources': what a read returns is what was written.
func TestArrowRoundTrip(t *testing.T) {
	dec, _ := new(big.Rat).SetString("-123.45")
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		dt arrow.DataType
		v  any
	}{
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, dec},
		{arrow.FixedWidthTypes.Date32, day},
		{arrow.PrimitiveTypes.Int32, int64(-7)},
		{arrow.PrimitiveTypes.Float32, float64(1.5)},
		{arrow.BinaryTypes.Binary, []byte{0, 1, 2}},
		{arrow.BinaryTypes.LargeString, "large"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, day.Add(1500 * time.Millisecond)},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), map[string]any{"a": int64(1), "b": nil}},
		{arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), map[string]any{"x": int64(3)}},
		{arrow.ListOf(arrow.FixedWidthTypes.Boolean), []any{true, nil, false}},
	} {
		app, err := appenderFor(c.dt)
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		get, err := getterFor(c.dt)
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		b := array.NewBuilder(memory.DefaultAllocator, c.dt)
		if err := app(b, c.v); err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		_ = app(b, nil)
		a := b.NewArray()
		got := get(a, 0)
		if r, ok := got.(*big.Rat); ok {
			if r.Cmp(dec) != 0 {
				t.Errorf("%s: read %v, wrote %v", c.dt, r, dec)
			}
		} else if !reflect.DeepEqual(got, c.v) {
			t.Errorf("%s: read %#v, wrote %#v", c.dt, got, c.v)
		}
		if get(a, 1) != nil {
			t.Errorf("%s: null reads as %v", c.dt, get(a, 1))
		}
		a.Release()
		b.Release()
	}
}
