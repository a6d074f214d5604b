package iceberg

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// dataFiles returns the local paths of the data files the table's current snapshot holds.
func (w warehouse) dataFiles(tableName string) []string {
	w.t.Helper()
	tasks, err := w.load(tableName).Scan().PlanFiles(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, strings.TrimPrefix(task.File.FilePath(), "file://"))
	}
	return out
}

type idName struct {
	ID   int64  `parquet:"id"`
	Name string `parquet:"name"`
}

// TestReadBack writes rows over two lanes and epochs and reads them back with iceberg-go's scan
// and, file by file, with parquet-go, an independent Parquet reader.
func TestReadBack(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "readback", lanes: 2}
	s := w.build(connectortest.Schema, "db.rb")
	h.open(s, "")
	defer s.Close(context.Background())
	d := connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
	h.write(s, connectortest.Schema, 0, 0, 500, idRow)
	h.flush(s, 1)
	d.Commit(s, 1, 500)
	h.write(s, connectortest.Schema, 0, 500, 1000, idRow)
	h.flush(s, 2)
	d.Commit(s, 2, 1000)

	if got := sorted(w.ids("db.rb")); !slices.Equal(got, seq(0, 1000)) {
		t.Fatalf("scan: %d ids, want 0..999", len(got))
	}
	at := w.scan("db.rb")
	names := map[int64]string{}
	for _, rec := range scanRows(t, at) {
		names[rec.ID] = rec.Name
	}
	files := w.dataFiles("db.rb")
	if len(files) != 4 { // two lanes, two epochs
		t.Errorf("%d data files, want 4: %v", len(files), files)
	}
	var fromParquet []int64
	for _, f := range files {
		rows, err := parquet.ReadFile[idName](f)
		if err != nil {
			t.Fatalf("parquet-go reading %s: %v", f, err)
		}
		for _, r := range rows {
			fromParquet = append(fromParquet, r.ID)
			if names[r.ID] != r.Name || r.Name != idRow(int(r.ID))[1] {
				t.Fatalf("row %d: parquet-go reads name %q, the scan %q", r.ID, r.Name, names[r.ID])
			}
		}
	}
	if got := sorted(fromParquet); !slices.Equal(got, seq(0, 1000)) {
		t.Fatalf("parquet-go: %d ids, want 0..999", len(got))
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Fatal(err)
	}
}
