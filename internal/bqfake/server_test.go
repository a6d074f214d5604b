package bqfake

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery/storage/managedwriter"
)

// Start listens where it is told; the REST paths answer with and without /bigquery/v2.
func TestStartListenConfig(t *testing.T) {
	srv, err := Start(ListenConfig{GRPC: "127.0.0.1:0", HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.GRPCAddr(), "127.0.0.1:") || !strings.HasPrefix(srv.HTTPURL(), "http://127.0.0.1:") {
		t.Fatalf("addresses %s %s", srv.GRPCAddr(), srv.HTTPURL())
	}
	if err := srv.CreateTable(testProject, testDataset, "t", eventSchema); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/bigquery/v2/projects/proj/datasets/ds/tables/t", "/projects/proj/datasets/ds/tables/t"} {
		resp, err := http.Get(srv.HTTPURL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	if err := srv.CreateTable(testProject, testDataset, "t", eventSchema); err == nil {
		t.Error("creating a table twice succeeded")
	}
	if err := srv.CreateDataset(testProject, "other"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.HTTPURL() + "/bigquery/v2/projects/proj/datasets/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET the dataset CreateDataset made: %s", resp.Status)
	}
}

// Close ends open AppendRows connections instead of waiting for the clients.
func TestCloseWithOpenConnections(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "t", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "t", managedwriter.DefaultStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), -1); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// DiscardRows keeps counts but not data.
func TestDiscardRows(t *testing.T) {
	e := newEnv(t, DiscardRows())
	e.createTable(t, "t", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "t", managedwriter.DefaultStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`), -1); err != nil {
		t.Fatal(err)
	}
	srv := e.srv
	if n, err := srv.RowCount(testProject, testDataset, "t"); n != 2 || err != nil {
		t.Errorf("RowCount = %d, %v", n, err)
	}
	if _, err := srv.Rows(testProject, testDataset, "t"); !errors.Is(err, ErrRowsDiscarded) {
		t.Errorf("Rows: %v, want ErrRowsDiscarded", err)
	}
	if _, err := srv.Rows(testProject, testDataset, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Rows of a missing table: %v, want ErrNotFound", err)
	}
}
