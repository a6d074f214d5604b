package bqfake

import (
	"encoding/json"
	"fmt"
	"testing"

	"cloud.google.com/go/bigquery"
	bq "google.golang.org/api/bigquery/v2"
)

// compiled binds the writer schema managedwriter/adapt derives from a table schema.
func compiled(t testing.TB, schema bigquery.Schema) (*writerSchema, []*column) {
	js, err := schema.ToJSONFields()
	if err != nil {
		t.Fatal(err)
	}
	var fields []*bq.TableFieldSchema
	if err := json.Unmarshal(js, &fields); err != nil {
		t.Fatal(err)
	}
	cols, err := normalizeSchema(fields, "")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := compileWriterSchema(newCodec(t, schema).dp, cols)
	if err != nil {
		t.Fatal(err)
	}
	return ws, cols
}

// FuzzCheckRow: every row the validator accepts decodes (Rows, tabledata.list) with its
// REQUIRED columns set. Run longer with: go test -fuzz FuzzCheckRow ./internal/bqfake
func FuzzCheckRow(f *testing.F) {
	ws, cols := compiled(f, allTypes)
	c := newCodec(f, allTypes)
	for _, js := range []string{
		`{"i": "1"}`,
		`{"i": "42", "f": 1.5, "s": "x", "b": "AAEC", "ok": true, "ts": "1700000000000000", "d": 19000,
		  "dt": "148697306522169353", "tm": "25037750272", "n": "AC9oWQ==", "j": "[1]", "rs": ["a", "b"],
		  "rec": {"x": "7", "inner": [{"y": "a"}]}}`,
		`{"s": "no i"}`,
	} {
		f.Add(c.rows(f, js)[0])
	}
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if ws.plan.checkRow(b) != "" {
			return
		}
		row, err := decodeRow(ws, b)
		if err != nil {
			t.Fatalf("accepted row does not decode: %v", err)
		}
		for _, c := range cols {
			if c.mode == modeRequired && row[c.name] == nil {
				t.Fatalf("accepted row has no %s", c.name)
			}
			_ = fmt.Sprint(cellValue(c, row[c.name], true), cellValue(c, row[c.name], false))
		}
	})
}
