package bqfake

import (
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/managedwriter"
	"cloud.google.com/go/civil"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
)

// schemaString renders a schema with modes and nesting, for comparisons.
func schemaString(s bigquery.Schema) string {
	var b strings.Builder
	for _, f := range s {
		mode := "NULLABLE"
		if f.Required {
			mode = "REQUIRED"
		} else if f.Repeated {
			mode = "REPEATED"
		}
		fmt.Fprintf(&b, "%s %s %s", f.Name, f.Type, mode)
		if len(f.Schema) > 0 {
			fmt.Fprintf(&b, " {%s}", schemaString(f.Schema))
		}
		b.WriteString("; ")
	}
	return b.String()
}

func httpCode(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

// https://cloud.google.com/bigquery/docs/reference/rest/v2/tables/insert and
// .../tables/get: "Creates a new, empty table in the dataset." / "Gets the specified
// table resource by table ID." The schema comes back with its modes and nested RECORD
// fields, and with the partitioning and clustering it was created with.
func TestTableCreateAndMetadata(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	ds := e.bq.Dataset(testDataset)
	if err := ds.Table("t").Create(ctx, &bigquery.TableMetadata{Schema: eventSchema}); httpCode(err) != http.StatusNotFound {
		t.Fatalf("create in a missing dataset: %v, want 404", err)
	}
	if err := ds.Create(ctx, &bigquery.DatasetMetadata{Location: "EU"}); err != nil {
		t.Fatal(err)
	}
	if md, err := ds.Metadata(ctx); err != nil || md.Location != "EU" {
		t.Fatalf("dataset metadata %+v, %v", md, err)
	}
	schema := bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType, Required: true},
		{Name: "ts", Type: bigquery.TimestampFieldType, Required: true},
		{Name: "region", Type: bigquery.StringFieldType},
		{Name: "items", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{
			{Name: "sku", Type: bigquery.StringFieldType, Required: true},
			{Name: "qty", Type: bigquery.IntegerFieldType},
			{Name: "dims", Type: bigquery.RecordFieldType, Schema: bigquery.Schema{
				{Name: "w", Type: bigquery.FloatFieldType},
				{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
			}},
		}},
	}
	want := &bigquery.TableMetadata{
		Schema:           schema,
		TimePartitioning: &bigquery.TimePartitioning{Type: bigquery.DayPartitioningType, Field: "ts"},
		Clustering:       &bigquery.Clustering{Fields: []string{"region", "id"}},
	}
	tbl := ds.Table("orders")
	if err := tbl.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Create(ctx, want); httpCode(err) != http.StatusConflict {
		t.Fatalf("second create: %v, want 409", err)
	}
	got, err := tbl.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if schemaString(got.Schema) != schemaString(schema) {
		t.Errorf("schema\n got %s\nwant %s", schemaString(got.Schema), schemaString(schema))
	}
	if got.TimePartitioning == nil || got.TimePartitioning.Field != "ts" || got.TimePartitioning.Type != bigquery.DayPartitioningType {
		t.Errorf("time partitioning %+v", got.TimePartitioning)
	}
	if got.Clustering == nil || strings.Join(got.Clustering.Fields, ",") != "region,id" {
		t.Errorf("clustering %+v", got.Clustering)
	}
	if got.Type != bigquery.RegularTable || got.CreationTime.IsZero() || got.FullID != testProject+":"+testDataset+".orders" {
		t.Errorf("metadata %+v", got)
	}

	it := ds.Tables(ctx)
	if first, err := it.Next(); err != nil || first.TableID != "orders" {
		t.Errorf("Dataset.Tables: %v, %v", first, err)
	}
	bad := &bigquery.TableMetadata{Schema: schema, TimePartitioning: &bigquery.TimePartitioning{Field: "region"}}
	if err := ds.Table("bad").Create(ctx, bad); httpCode(err) != http.StatusBadRequest {
		t.Errorf("partitioning on a STRING column: %v, want 400", err)
	}
	if err := tbl.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Metadata(ctx); httpCode(err) != http.StatusNotFound {
		t.Errorf("metadata after delete: %v, want 404", err)
	}
}

// allTypes has a column of every type bqfake decodes.
var allTypes = bigquery.Schema{
	{Name: "i", Type: bigquery.IntegerFieldType, Required: true},
	{Name: "f", Type: bigquery.FloatFieldType},
	{Name: "s", Type: bigquery.StringFieldType},
	{Name: "b", Type: bigquery.BytesFieldType},
	{Name: "ok", Type: bigquery.BooleanFieldType},
	{Name: "ts", Type: bigquery.TimestampFieldType},
	{Name: "d", Type: bigquery.DateFieldType},
	{Name: "dt", Type: bigquery.DateTimeFieldType},
	{Name: "tm", Type: bigquery.TimeFieldType},
	{Name: "n", Type: bigquery.NumericFieldType},
	{Name: "j", Type: bigquery.JSONFieldType},
	{Name: "rs", Type: bigquery.StringFieldType, Repeated: true},
	{Name: "rec", Type: bigquery.RecordFieldType, Schema: bigquery.Schema{
		{Name: "x", Type: bigquery.IntegerFieldType},
		{Name: "inner", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{
			{Name: "y", Type: bigquery.StringFieldType},
		}},
	}},
}

// packCivil encodes a DATETIME the way the Storage Write API's int64 encoding does.
func packCivil(dt civil.DateTime) int64 {
	secs := int64(dt.Date.Year)<<26 | int64(dt.Date.Month)<<22 | int64(dt.Date.Day)<<17 |
		int64(dt.Time.Hour)<<12 | int64(dt.Time.Minute)<<6 | int64(dt.Time.Second)
	return secs<<20 | int64(dt.Time.Nanosecond/1000)
}

// https://cloud.google.com/bigquery/docs/reference/rest/v2/tabledata/list: "List the
// content of a table in rows." Rows written through the Storage Write API come back
// through bigquery.Client's Table.Read, and through Server.Rows, as the same values.
func TestReadBackAllTypes(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "all", allTypes)
	c := newCodec(t, allTypes)
	ms := e.stream(t, "all", managedwriter.DefaultStream, c)

	ts := time.Date(2024, 3, 5, 6, 7, 8, 9000, time.UTC)
	day := civil.Date{Year: 2024, Month: 3, Day: 5}
	dt := civil.DateTime{Date: day, Time: civil.Time{Hour: 6, Minute: 7, Second: 8, Nanosecond: 9000}}
	tm := civil.Time{Hour: 23, Minute: 59, Second: 58, Nanosecond: 123000}
	full := fmt.Sprintf(`{"i": "42", "f": 1.5, "s": "héllo", "b": "AAEC", "ok": true, "ts": "%d", "d": %d,
		"dt": "%d", "tm": "%d", "n": "AC9oWQ==", "j": "{\"a\":1}", "rs": ["x", "y"],
		"rec": {"x": "7", "inner": [{"y": "a"}, {"y": "b"}]}}`,
		ts.UnixMicro(), day.DaysSince(civil.Date{Year: 1970, Month: 1, Day: 1}),
		packCivil(dt), packCivil(civil.DateTime{Time: tm}))
	if _, err := appendAt(t, ms, c.rows(t, full, `{"i": "-1"}`), -1); err != nil {
		t.Fatal(err)
	}

	rows := e.rows(t, "all")
	if len(rows) != 2 {
		t.Fatalf("Rows: %d rows, want 2", len(rows))
	}
	r := rows[0]
	checks := []struct {
		col  string
		ok   bool
		want any
	}{
		{"i", r["i"] == int64(42), int64(42)},
		{"f", r["f"] == 1.5, 1.5},
		{"s", r["s"] == "héllo", "héllo"},
		{"b", string(r["b"].([]byte)) == "\x00\x01\x02", []byte{0, 1, 2}},
		{"ok", r["ok"] == true, true},
		{"ts", r["ts"] == ts, ts},
		{"d", r["d"] == day, day},
		{"dt", r["dt"] == dt, dt},
		{"tm", r["tm"] == tm, tm},
		{"n", r["n"].(*big.Rat).Cmp(big.NewRat(3, 2)) == 0, "3/2"},
		{"j", r["j"] == `{"a":1}`, `{"a":1}`},
		{"rs", fmt.Sprint(r["rs"]) == "[x y]", []any{"x", "y"}},
		{"rec", fmt.Sprint(r["rec"]) == "map[inner:[map[y:a] map[y:b]] x:7]", "map[inner:[map[y:a] map[y:b]] x:7]"},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("Rows: %s = %#v, want %#v", ch.col, r[ch.col], ch.want)
		}
	}
	if null := rows[1]; null["s"] != nil || null["rec"] != nil || fmt.Sprint(null["rs"]) != "[]" {
		t.Errorf("Rows: NULLs and empty arrays: %v", null)
	}

	it := e.bq.Dataset(testDataset).Table("all").Read(testCtx(t))
	var got [][]bigquery.Value
	for {
		var row []bigquery.Value
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("Table.Read: %v", err)
		}
		got = append(got, row)
	}
	if len(got) != 2 {
		t.Fatalf("Table.Read: %d rows", len(got))
	}
	want := fmt.Sprint([]bigquery.Value{int64(42), 1.5, "héllo", []byte{0, 1, 2}, true, ts, day, dt, tm,
		big.NewRat(3, 2), `{"a":1}`, []bigquery.Value{"x", "y"},
		[]bigquery.Value{int64(7), []bigquery.Value{[]bigquery.Value{"a"}, []bigquery.Value{"b"}}}})
	if fmt.Sprint(got[0]) != want {
		t.Errorf("Table.Read row\n got %v\nwant %v", got[0], want)
	}
	if got[1][0] != int64(-1) || got[1][2] != nil || len(got[1][11].([]bigquery.Value)) != 0 {
		t.Errorf("Table.Read NULL row: %v", got[1])
	}
}

// tabledata.list pages: "pageToken: Page token, returned by a previous call, identifying
// the result set." Table.Read follows the tokens to the end, in commit order.
func TestReadBackPages(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.CommittedStream, c)
	for i := range 5 {
		if _, err := appendAt(t, ms, c.rows(t, fmt.Sprintf(`{"id": %d}`, i)), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	it := e.bq.Dataset(testDataset).Table("events").Read(testCtx(t))
	it.PageInfo().MaxSize = 2
	var ids []int64
	for {
		var row []bigquery.Value
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row[0].(int64))
	}
	if fmt.Sprint(ids) != "[0 1 2 3 4]" {
		t.Fatalf("ids %v", ids)
	}
	if it.TotalRows != 5 {
		t.Errorf("TotalRows %d", it.TotalRows)
	}
}
