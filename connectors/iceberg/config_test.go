package iceberg

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

func TestConfigErrors(t *testing.T) {
	in := schemas.New(
		schemas.Field{Name: "id", Type: typ(schemas.Int64)},
		schemas.Field{Name: "name", Type: typ(schemas.String)},
		schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
		schemas.Field{Name: "user", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{{Name: "a", Type: typ(schemas.Int64)}}}},
	)
	for _, c := range []struct{ extra, want string }{
		{`partition_fields: ["day(ts)", "bucket(id)"]`, `pipeline.yaml:8:33: partition field "bucket(id)": bucket takes a column and a number, as bucket(id, 16)`},
		{`partition_fields: ["day(nope)"]`, `pipeline.yaml:8:22: partition field nope_day: no column "nope" in the rows written`},
		{`partition_fields: ["day(name)"]`, `pipeline.yaml:8:22: partition field name_day: day cannot apply to column "name" of type string`},
		{`partition_fields: ["frobnicate(id)"]`, `unknown transform "frobnicate"`},
		{`partition_fields: ["truncate(name, x)"]`, `truncate needs a positive whole number, not "x"`},
		{"keep: [id, nmae]", `pipeline.yaml:8:14: keep: no field "nmae" in the input (did you mean "name"?)`},
		{"keep: [id]\n  drop: [name]", "keep, drop and only exclude each other"},
		{"only: name", `only: "name" is not a struct field of the input`},
		{"triggering_frequency_seconds: -5", `"-5" is not a duration`},
		{`table_properties: {write.target-file-size-bytes: "big"}`, "write.target-file-size-bytes must be a positive number of bytes"},
	} {
		b := componenttest.Env{File: testFile}.Build(t, "", newWarehouse(t).config("db.t", c.extra), in)
		if b.Err() == nil || !strings.Contains(b.Err().Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.extra, b.Err(), c.want)
		}
	}
	for _, c := range []struct{ table, want string }{
		{"db.events_{contry}", `pipeline.yaml:3:10: table "db.events_{contry}": no field "contry" in the input to route by`},
		{"db_{name}.events", "pipeline.yaml:3:10: table \"db_{name}.events\": only the table's name may route by field"},
		{"db.events_{ts}", `cannot route by field "ts" of type timestamp`},
		{"db.events_{name", "unbalanced { or }"},
		{"db.events_{}", "{} names no field"},
	} {
		b := componenttest.Env{File: testFile}.Build(t, "", "type: WriteToIceberg\nconfig:\n  table: "+c.table+"\n", in)
		if b.Err() == nil || !strings.Contains(b.Err().Error(), c.want) {
			t.Errorf("routing %s:\n got  %v\n want %s", c.table, b.Err(), c.want)
		}
	}
	b := componenttest.Env{File: testFile}.Build(t, "", "type: WriteToIceberg\nconfig:\n  table: db.t\n  schema_evolution: add_column\n", in)
	if b.Err() == nil || !strings.Contains(b.Err().Error(), `pipeline.yaml:4:21: schema_evolution: "add_column" is not one of none, add_columns`) {
		t.Errorf("schema_evolution: %v", b.Err())
	}
	b = componenttest.Env{File: testFile}.Build(t, "", "type: WriteToIceberg\nconfig:\n  table: db.t\n  schema_update: sometimes\n", in)
	if b.Err() == nil || !strings.Contains(b.Err().Error(), `pipeline.yaml:4:18: schema_update: "sometimes" is not one of none, add_columns`) {
		t.Errorf("schema_update: %v", b.Err())
	}
	for value, want := range map[string]string{"add_columns": addColumns, "off": evolveNone} {
		b = componenttest.Env{File: testFile}.Build(t, "", newWarehouse(t).config("db.t", "schema_update: "+value), in)
		if b.Err() != nil || b.Component.(*sink).cfg.SchemaEvolution != want {
			t.Errorf("schema_update: %s: %v, want schema_evolution %s", value, b.Err(), want)
		}
	}
	b = componenttest.Env{File: testFile}.Build(t, "", "type: WriteToIceberg\nconfig:\n  table: events\n", in)
	if b.Err() == nil || !strings.Contains(b.Err().Error(), "want namespace.table") {
		t.Errorf("bare table: %v", b.Err())
	}
}

func TestConfigTrigger(t *testing.T) {
	b := componenttest.Env{File: testFile}.Build(t, "", newWarehouse(t).config("db.t", "triggering_frequency_seconds: 30"), connectortest.Schema)
	if b.Err() != nil || b.Context.Trigger() != 30*time.Second {
		t.Fatalf("trigger %v, err %v", b.Context.Trigger(), b.Err())
	}
}

func TestCatalogProps(t *testing.T) {
	t.Chdir(t.TempDir())
	p, err := catalogProps(&WriteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if p["type"] != "sql" || p["sql.driver"] != "sqlite" || !strings.HasSuffix(strings.Split(p["uri"], "?")[0], "/warehouse/catalog.db") ||
		!strings.Contains(p["uri"], "busy_timeout") || !strings.HasPrefix(p["warehouse"], "file:///") {
		t.Fatalf("default catalog properties %v", p)
	}
	p, err = catalogProps(&WriteConfig{CatalogProperties: map[string]string{"type": "rest", "uri": "http://cat:8181"}})
	if err != nil || p["uri"] != "http://cat:8181" || p["sql.driver"] != "" {
		t.Fatalf("rest properties %v, %v", p, err)
	}
}

// TestKeepOnly writes the fields of one struct field, and a subset of fields, into tables.
func TestKeepOnly(t *testing.T) {
	w := newWarehouse(t)
	in := schemas.New(
		schemas.Field{Name: "meta", Type: typ(schemas.String)},
		schemas.Field{Name: "rec", Type: schemas.Type{Kind: schemas.Struct, Fields: connectortest.Schema.Fields}},
	)
	h := harness{t: t, pipeline: "only", lanes: 1}
	s := w.build(in, "db.only", "only: rec")
	h.open(s, "")
	defer s.Close(t.Context())
	h.write(s, in, 0, 0, 5, func(i int) schemas.Row {
		return schemas.Row{"m", map[string]any{"id": int64(i), "name": "x"}}
	})
	h.flush(s, 1)
	h.driver().Commit(s, 1, 5)
	if got := sorted(w.ids("db.only")); len(got) != 5 || got[4] != 4 {
		t.Fatalf("ids %v", got)
	}
	if cols := w.load("db.only").Schema().NumFields(); cols != 2 {
		t.Fatalf("%d columns, want id and name", cols)
	}
}
