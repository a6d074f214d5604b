package iceberg

import (
	"context"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

// allKinds has a field of every kind the sink writes, nested ones included.
var allKinds = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "ok", Type: typ(schemas.Bool), Nullable: true},
	schemas.Field{Name: "score", Type: typ(schemas.Float64), Nullable: true},
	schemas.Field{Name: "name", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "raw", Type: typ(schemas.Bytes), Nullable: true},
	schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "day", Type: typ(schemas.Date), Nullable: true},
	schemas.Field{Name: "amount", Type: schemas.Type{Kind: schemas.Decimal, Precision: 12, Scale: 2}, Nullable: true},
	schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &schemas.Type{Kind: schemas.String}}, Nullable: true},
	schemas.Field{Name: "user", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
		{Name: "age", Type: typ(schemas.Int64), Nullable: true},
		{Name: "email", Type: typ(schemas.String), Nullable: true},
	}}, Nullable: true},
	schemas.Field{Name: "attrs", Type: schemas.Type{Kind: schemas.Map, Elem: &schemas.Type{Kind: schemas.Int64}}, Nullable: true},
)

var base = time.Date(2024, 3, 1, 22, 0, 0, 0, time.UTC)

func kindRow(i int) schemas.Row {
	r := schemas.Row{
		int64(i), i%2 == 0, float64(i) / 4, fmt.Sprintf("name-%d", i), []byte{byte(i), 1},
		base.Add(time.Duration(i) * 17 * time.Minute).Truncate(time.Microsecond),
		time.Date(2024, 1, 1+i%40, 0, 0, 0, 0, time.UTC),
		big.NewRat(int64(i)*100+5, 100),
		[]any{"a", fmt.Sprint(i)},
		map[string]any{"age": int64(20 + i%50), "email": fmt.Sprintf("u%d@x", i)},
		map[string]any{"k": int64(i), "z": int64(-i)},
	}
	if i%7 == 0 { // nulls in every nullable field
		for j, f := range allKinds.Fields {
			if f.Nullable {
				r[j] = nil
			}
		}
	}
	return r
}

// TestTypesRoundTrip writes a row of every kind into a table partitioned by bucket and day,
// and reads the same values back with iceberg-go's scan; parquet-go reads every data file.
func TestTypesRoundTrip(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "types", lanes: 2}
	s := w.build(allKinds, "db.kinds", `partition_fields: ["bucket(id, 4)", "day(ts)"]`)
	h.open(s, "")
	defer s.Close(context.Background())
	const n = 200
	h.write(s, allKinds, 0, 0, n, kindRow)
	h.flush(s, 1)
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}.Commit(s, 1, n)

	tbl := w.load("db.kinds")
	wantTypes := map[string]string{"id": "long", "ok": "boolean", "score": "double", "name": "string", "raw": "binary",
		"ts": "timestamptz", "day": "date", "amount": "decimal(12, 2)", "tags": "list<string>",
		"user": "struct<3: age: optional long, 4: email: optional string>", "attrs": "map<string, long>"}
	for _, f := range tbl.Schema().Fields() {
		if got := f.Type.String(); !strings.HasPrefix(got, strings.Split(wantTypes[f.Name], "<")[0]) {
			t.Errorf("column %s has type %s, want %s", f.Name, got, wantTypes[f.Name])
		}
	}
	if spec := tbl.Spec(); spec.NumFields() != 2 {
		t.Fatalf("spec %v, want bucket and day", spec)
	}

	w.checkScan("db.kinds", allKinds, n, kindRow)

	// The files are partitioned: each holds one bucket and day, which parquet-go confirms.
	files := w.dataFiles("db.kinds")
	if len(files) < 8 {
		t.Fatalf("%d data files for 4 buckets over several days, want more", len(files))
	}
	type tsOnly struct {
		ID int64 `parquet:"id"`
		TS int64 `parquet:"ts"`
	}
	total := 0
	for _, f := range files {
		rows, err := parquet.ReadFile[tsOnly](f)
		if err != nil {
			t.Fatalf("parquet-go reading %s: %v", f, err)
		}
		days := map[int64]bool{}
		for _, r := range rows {
			days[r.TS/(86400*1e6)] = true
			if want := kindRow(int(r.ID))[5].(time.Time).UnixMicro(); r.TS != want {
				t.Fatalf("parquet-go: row %d has ts %d, want %d", r.ID, r.TS, want)
			}
		}
		if len(days) != 1 {
			t.Errorf("%s holds %d days, want 1", f, len(days))
		}
		total += len(rows)
	}
	if total != n {
		t.Fatalf("parquet-go: %d rows in the data files, want %d", total, n)
	}
}

// checkScan fails the test unless iceberg-go's scan of the table reads rows 0..n-1 made by
// row, by their first field (an int64 id), with the fields of sc.
func (w warehouse) checkScan(tableName string, sc *schemas.Schema, n int, row func(int) schemas.Row) {
	w.t.Helper()
	got := scanByID(w.scan(tableName), sc)
	if len(got) != n {
		w.t.Fatalf("scan: %d rows, want %d", len(got), n)
	}
	for i := range n {
		if want := norm(row(i)); !reflect.DeepEqual(norm(got[int64(i)]), want) {
			w.t.Fatalf("row %d:\n got  %v\n want %v", i, norm(got[int64(i)]), want)
		}
	}
}

// scanByID returns the rows of a scanned table by their first field (an int64 id), with the
// fields of sc.
func scanByID(at arrow.Table, sc *schemas.Schema) map[int64]schemas.Row {
	got := map[int64]schemas.Row{}
	tr := array.NewTableReader(at, 64)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := make(schemas.Row, len(sc.Fields))
			for j, f := range sc.Fields {
				row[j] = arrowValue(rec.Column(rec.Schema().FieldIndices(f.Name)[0]), i)
			}
			got[row[0].(int64)] = row
		}
	}
	return got
}

// arrowValue returns the value at i of col as a Row holds it.
func arrowValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch c := col.(type) {
	case *array.Boolean:
		return c.Value(i)
	case *array.Int64:
		return c.Value(i)
	case *array.Float64:
		return c.Value(i)
	case *array.String:
		return c.Value(i)
	case *array.Binary:
		return slices.Clone(c.Value(i))
	case *array.Timestamp:
		return c.Value(i).ToTime(c.DataType().(*arrow.TimestampType).Unit).UTC()
	case *array.Date32:
		return c.Value(i).ToTime().UTC()
	case *array.Decimal128:
		scale := c.DataType().(*arrow.Decimal128Type).Scale
		return new(big.Rat).SetFrac(c.Value(i).BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	case *array.Map: // before List: a Map is a List
		start, end := c.ValueOffsets(i)
		keys, items := c.Keys().(*array.String), c.Items()
		m := map[string]any{}
		for j := start; j < end; j++ {
			m[keys.Value(int(j))] = arrowValue(items, int(j))
		}
		return m
	case *array.List:
		start, end := c.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, arrowValue(c.ListValues(), int(j)))
		}
		return out
	case *array.Struct:
		m := map[string]any{}
		st := c.DataType().(*arrow.StructType)
		for j := range st.NumFields() {
			m[st.Field(j).Name] = arrowValue(c.Field(j), i)
		}
		return m
	}
	panic(fmt.Sprintf("arrowValue: %s", col.DataType()))
}

// norm makes values comparable with reflect.DeepEqual.
func norm(v any) any {
	switch x := v.(type) {
	case schemas.Row:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = norm(e)
		}
		return out
	case *big.Rat:
		return "rat:" + x.RatString()
	case time.Time:
		return "time:" + x.UTC().Format(time.RFC3339Nano)
	}
	return v
}

func TestTableSchemaRejectsSchemaless(t *testing.T) {
	_, err := tableSchema(schemas.New(schemas.Field{Name: "payload", Type: typ(schemas.Any)}))
	if err == nil || !strings.Contains(err.Error(), `column "payload" has no fixed type`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckCompatible(t *testing.T) {
	ts := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "extra", Type: iceberg.PrimitiveTypes.Date},
	)
	for _, c := range []struct {
		rows *schemas.Schema
		want string
	}{
		{connectortest.Schema, ""},
		{schemas.New(schemas.Field{Name: "id", Type: typ(schemas.Int64)}, schemas.Field{Name: "other", Type: typ(schemas.String)}), `column "other" is not in the table`},
		{schemas.New(schemas.Field{Name: "id", Type: typ(schemas.Int64), Nullable: true}), `column "id" is required in the table, but the rows may hold null`},
		{schemas.New(schemas.Field{Name: "name", Type: typ(schemas.String)}), `column "id" is required in the table, but the rows do not have it`},
		{schemas.New(schemas.Field{Name: "id", Type: typ(schemas.String)}), `column "id" has type int in the table, which rows of type string cannot be written to`},
	} {
		err := checkCompatible(c.rows, ts)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v, want %q", c.rows, err, c.want)
		}
	}
}
