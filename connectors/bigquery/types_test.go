package bigquery

import (
	"strings"
	"testing"

	bq "cloud.google.com/go/bigquery"
	"github.com/sluicehq/sluice/schemas"
)

func typ(k schemas.Kind) schemas.Type { return schemas.Type{Kind: k} }

func arrayOf(t schemas.Type) schemas.Type { return schemas.Type{Kind: schemas.Array, Elem: &t} }
func mapOf(t schemas.Type) schemas.Type   { return schemas.Type{Kind: schemas.Map, Elem: &t} }
func decimal(p, s int) schemas.Type {
	return schemas.Type{Kind: schemas.Decimal, Precision: p, Scale: s}
}
func structOf(fs ...schemas.Field) schemas.Type {
	return schemas.Type{Kind: schemas.Struct, Fields: fs}
}

// allKinds has a field of every kind, nested and repeated ones included.
var allKinds = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "ok", Type: typ(schemas.Bool), Nullable: true},
	schemas.Field{Name: "score", Type: typ(schemas.Float64), Nullable: true},
	schemas.Field{Name: "name", Type: typ(schemas.String), Nullable: true},
	schemas.Field{Name: "raw", Type: typ(schemas.Bytes), Nullable: true},
	schemas.Field{Name: "ts", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "day", Type: typ(schemas.Date), Nullable: true},
	schemas.Field{Name: "amount", Type: decimal(12, 2), Nullable: true},
	schemas.Field{Name: "huge", Type: decimal(50, 20), Nullable: true},
	schemas.Field{Name: "tags", Type: arrayOf(typ(schemas.String)), Nullable: true},
	schemas.Field{Name: "counts", Type: arrayOf(typ(schemas.Int64)), Nullable: true},
	schemas.Field{Name: "user", Type: structOf(
		schemas.Field{Name: "age", Type: typ(schemas.Int64), Nullable: true},
		schemas.Field{Name: "email", Type: typ(schemas.String)},
	), Nullable: true},
	schemas.Field{Name: "items", Type: arrayOf(structOf(
		schemas.Field{Name: "sku", Type: typ(schemas.String)},
		schemas.Field{Name: "qty", Type: typ(schemas.Int64), Nullable: true},
	)), Nullable: true},
	schemas.Field{Name: "attrs", Type: mapOf(typ(schemas.Int64)), Nullable: true},
	schemas.Field{Name: "extra", Type: typ(schemas.Any), Nullable: true},
)

// render shows a table schema as "name TYPE MODE", nested columns indented.
func render(s bq.Schema, indent string) string {
	var b strings.Builder
	for _, c := range s {
		mode := "NULLABLE"
		if c.Repeated {
			mode = "REPEATED"
		} else if c.Required {
			mode = "REQUIRED"
		}
		b.WriteString(indent + c.Name + " " + string(c.Type) + " " + mode + "\n")
		b.WriteString(render(c.Schema, indent+"  "))
	}
	return b.String()
}

func TestTypesTableSchemaFor(t *testing.T) {
	got, err := tableSchemaFor(allKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := `id INTEGER REQUIRED
ok BOOLEAN NULLABLE
score FLOAT NULLABLE
name STRING NULLABLE
raw BYTES NULLABLE
ts TIMESTAMP REQUIRED
day DATE NULLABLE
amount NUMERIC NULLABLE
huge BIGNUMERIC NULLABLE
tags STRING REPEATED
counts INTEGER REPEATED
user RECORD NULLABLE
  age INTEGER NULLABLE
  email STRING REQUIRED
items RECORD REPEATED
  sku STRING REQUIRED
  qty INTEGER NULLABLE
attrs RECORD REPEATED
  key STRING REQUIRED
  value INTEGER NULLABLE
extra JSON NULLABLE
`
	if r := render(got, ""); r != want {
		t.Errorf("got\n%s\nwant\n%s", r, want)
	}
	if err := checkCompatible(got, allKinds); err != nil {
		t.Errorf("the table made for the rows does not take them: %v", err)
	}
}

func TestTypesDecimalColumns(t *testing.T) {
	for _, tc := range []struct {
		t    schemas.Type
		want bq.FieldType // "" = error
	}{
		{decimal(0, 0), bq.NumericFieldType}, // no precision: NUMERIC, as in Beam
		{decimal(10, 2), bq.NumericFieldType},
		{decimal(38, 9), bq.NumericFieldType},
		{decimal(29, 0), bq.NumericFieldType},
		{decimal(30, 0), bq.BigNumericFieldType}, // 30 integer digits do not fit NUMERIC
		{decimal(38, 0), bq.BigNumericFieldType},
		{decimal(20, 10), bq.BigNumericFieldType}, // scale 10 > 9
		{decimal(76, 38), bq.BigNumericFieldType},
		{decimal(77, 38), ""},
		{decimal(60, 39), ""},
		{decimal(5, 6), ""},
	} {
		got, err := tableSchemaFor(schemas.New(schemas.Field{Name: "d", Type: tc.t}))
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: got %s, want an error", tc.t, got[0].Type)
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.t, err)
		case tc.want != "" && got[0].Type != tc.want:
			t.Errorf("%s: got %s, want %s", tc.t, got[0].Type, tc.want)
		}
	}
}

func TestTypesTableSchemaForErrors(t *testing.T) {
	in := schemas.New(
		schemas.Field{Name: "matrix", Type: arrayOf(arrayOf(typ(schemas.Int64)))},
		schemas.Field{Name: "ok", Type: typ(schemas.Int64)},
		schemas.Field{Name: "s", Type: structOf(
			schemas.Field{Name: "maps", Type: arrayOf(mapOf(typ(schemas.String)))},
			schemas.Field{Name: "loose", Type: schemas.Type{Kind: schemas.Array}},
		)},
		schemas.Field{Name: "OK", Type: typ(schemas.String)},
		schemas.Field{Name: "big", Type: decimal(90, 2)},
	)
	_, err := tableSchemaFor(in)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`field "matrix" has type array<array<integer>>, but BigQuery has no nested arrays`,
		`field "s.maps" has type array<map<string, string>>, but BigQuery has no nested arrays (nor arrays of maps`,
		`field "s.loose" has no fixed type`,
		`field "OK" has the same name as field "ok": BigQuery column names are case-insensitive`,
		`field "big" has type decimal(90, 2), which does not fit BigQuery`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n"); n != 5 { // a heading, then one line per problem
		t.Errorf("got %d lines, want 6:\n%s", n+1, msg)
	}
}

func TestTypesCheckCompatible(t *testing.T) {
	table := bq.Schema{
		{Name: "ID", Type: "INT64", Required: true}, // standard SQL alias, other case
		{Name: "amount", Type: bq.NumericFieldType, Precision: 10, Scale: 2},
		{Name: "ratio", Type: bq.FloatFieldType},
		{Name: "at", Type: bq.DateTimeFieldType},
		{Name: "payload", Type: bq.JSONFieldType},
		{Name: "note", Type: bq.StringFieldType},
		{Name: "tags", Type: bq.StringFieldType, Repeated: true},
		{Name: "user", Type: "STRUCT", Schema: bq.Schema{
			{Name: "age", Type: bq.IntegerFieldType},
			{Name: "email", Type: bq.StringFieldType, Required: true},
			{Name: "since", Type: bq.DateFieldType},
		}},
		{Name: "attrs", Type: bq.RecordFieldType, Repeated: true, Schema: bq.Schema{
			{Name: "Key", Type: bq.StringFieldType, Required: true},
			{Name: "Value", Type: bq.BigNumericFieldType},
		}},
		{Name: "spare", Type: bq.GeographyFieldType},              // nullable, not in the rows: fine
		{Name: "history", Type: bq.DateFieldType, Repeated: true}, // repeated, not in the rows: fine
	}
	good := schemas.New(
		schemas.Field{Name: "id", Type: typ(schemas.Int64), Nullable: true}, // null: a row error
		schemas.Field{Name: "amount", Type: typ(schemas.Int64)},
		schemas.Field{Name: "ratio", Type: typ(schemas.Int64)},
		schemas.Field{Name: "at", Type: typ(schemas.Timestamp)},
		schemas.Field{Name: "payload", Type: typ(schemas.String)},
		schemas.Field{Name: "note", Type: typ(schemas.Any)},
		schemas.Field{Name: "tags", Type: arrayOf(typ(schemas.String))},
		schemas.Field{Name: "user", Type: structOf(
			schemas.Field{Name: "EMAIL", Type: typ(schemas.String)},
		)},
		schemas.Field{Name: "attrs", Type: mapOf(decimal(20, 4))},
	)
	if err := checkCompatible(table, good); err != nil {
		t.Errorf("compatible rows rejected: %v", err)
	}

	bad := schemas.New(
		schemas.Field{Name: "amount", Type: typ(schemas.Float64)},
		schemas.Field{Name: "ratio", Type: arrayOf(typ(schemas.Float64))},
		schemas.Field{Name: "tags", Type: typ(schemas.String)},
		schemas.Field{Name: "user", Type: structOf(
			schemas.Field{Name: "age", Type: typ(schemas.String)},
			schemas.Field{Name: "phone", Type: typ(schemas.String)},
		)},
		schemas.Field{Name: "attrs", Type: mapOf(typ(schemas.Bool))},
		schemas.Field{Name: "at", Type: typ(schemas.Date)},
		schemas.Field{Name: "AT", Type: typ(schemas.Timestamp)},
		schemas.Field{Name: "missing", Type: typ(schemas.Int64)},
	)
	err := checkCompatible(table, bad)
	if err == nil {
		t.Fatal("incompatible rows accepted")
	}
	msg := err.Error()
	wants := []string{
		`field "amount" has type NUMERIC(10, 2) in the table, which rows of type number cannot be written to (number goes into FLOAT64)`,
		`field "ratio" has type FLOAT64 in the table, which rows of type array<number> cannot be written to (an array goes into a REPEATED column)`,
		`field "tags" has type ARRAY<STRING> in the table, which rows of type string cannot be written to (a REPEATED column takes arrays)`,
		`field "user.age" has type INT64 in the table, which rows of type string cannot be written to (string goes into STRING, JSON, GEOGRAPHY, DATETIME, TIME)`,
		`field "user.phone" is not in the table`,
		`field "user.email" is a REQUIRED STRING column in the table, but the rows do not have it`,
		`field "attrs.Value" has type BIGNUMERIC in the table, which rows of type boolean cannot be written to`,
		`field "AT" and field "at" both go into column "at"`,
		`field "missing" is not in the table`,
		`field "ID" is a REQUIRED INT64 column in the table, but the rows do not have it`,
	}
	for _, want := range wants {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n"); n != len(wants) {
		t.Errorf("got %d lines, want %d (a heading and one per problem):\n%s", n+1, len(wants)+1, msg)
	}
}

// allColumnTypes are the column types BigQuery has.
var allColumnTypes = []bq.FieldType{
	bq.StringFieldType, bq.BytesFieldType, bq.IntegerFieldType, bq.FloatFieldType, bq.BooleanFieldType,
	bq.TimestampFieldType, bq.RecordFieldType, bq.DateFieldType, bq.TimeFieldType, bq.DateTimeFieldType,
	bq.NumericFieldType, bq.GeographyFieldType, bq.BigNumericFieldType, bq.IntervalFieldType,
	bq.JSONFieldType, bq.RangeFieldType,
}

// TestTypesAcceptsMatchesEncoder holds accepts and the encoder to each other: every pair the
// compatibility check takes has an encoding, and no other pair has one.
func TestTypesAcceptsMatchesEncoder(t *testing.T) {
	for k := schemas.Any; k <= schemas.Map; k++ {
		if k == schemas.Array || k == schemas.Map || k == schemas.Struct {
			continue
		}
		in := schemas.New(schemas.Field{Name: "v", Type: typ(k), Nullable: true})
		for _, ft := range allColumnTypes {
			col := &bq.FieldSchema{Name: "v", Type: ft}
			if ft == bq.RecordFieldType {
				col.Schema = bq.Schema{{Name: "x", Type: bq.IntegerFieldType}}
			}
			if ft == bq.RangeFieldType {
				col.RangeElementType = &bq.RangeElementType{Type: bq.DateFieldType}
			}
			checkErr := checkCompatible(bq.Schema{col}, in)
			_, encErr := newEncoder(bq.Schema{col}, in)
			put, _ := scalarPut(k, ft, col)
			if (checkErr == nil) != (encErr == nil) || (checkErr == nil) != (put != nil) {
				t.Errorf("%s into %s: check %v, encoder %v, conversion %v", k, ft, checkErr, encErr, put != nil)
			}
		}
	}
}
