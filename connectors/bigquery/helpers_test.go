package bigquery

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/internal/bqfake"
	"github.com/sluicehq/sluice/schemas"
)

const testProject = "sluice-test"

// fakeBQ is a Storage Write API server on loopback with a dataset "ds", and a directory for
// the sinks' state.
type fakeBQ struct {
	t   *testing.T
	srv *bqfake.Server
	dir string
	// delivery is the pipeline's that build builds sinks for ("": exactly_once).
	delivery component.Delivery
}

func newFakeBQ(t *testing.T) *fakeBQ {
	t.Helper()
	srv, err := bqfake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.CreateDataset(testProject, "ds"); err != nil {
		t.Fatalf("create dataset: %v", err)
	}
	return &fakeBQ{t: t, srv: srv, dir: t.TempDir()}
}

// config is the config block of a WriteToBigQuery writing ds.table on the server, plus extra
// YAML lines (indented by two spaces).
func (f *fakeBQ) config(table string, extra ...string) string {
	s := fmt.Sprintf("type: WriteToBigQuery\nconfig:\n  table: %s:ds.%s\n  endpoint: %s\n  storage_endpoint: %s\n  checkpoint_dir: %s\n",
		testProject, table, f.srv.HTTPURL()+"/bigquery/v2/", f.srv.GRPCAddr(), filepath.Join(f.dir, "state"))
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}

// build builds a WriteToBigQuery sink for rows of in; it fails t on config errors.
func (f *fakeBQ) build(in *schemas.Schema, table string, extra ...string) *sink {
	f.t.Helper()
	b := componenttest.Env{File: "pipeline.yaml", Options: component.Options{Delivery: f.delivery}}.Build(f.t, "", f.config(table, extra...), in)
	if err := b.Err(); err != nil || b.Component == nil {
		f.t.Fatalf("build: %v", err)
	}
	return b.Component.(*sink)
}

// rows returns the committed rows of ds.table.
func (f *fakeBQ) rows(table string) []map[string]any {
	f.t.Helper()
	rows, err := f.srv.Rows(testProject, "ds", table)
	if err != nil {
		f.t.Fatal(err)
	}
	return rows
}

// ids returns the id column of the committed rows of ds.table.
func (f *fakeBQ) ids(table string) []int64 {
	f.t.Helper()
	var ids []int64
	for _, r := range f.rows(table) {
		id, ok := r["id"].(int64)
		if !ok {
			f.t.Fatalf("row %v has no integer id", r)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
