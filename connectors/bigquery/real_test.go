package bigquery

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// RealProjectEnv names the Google Cloud project of the tests against real BigQuery; they
// authenticate with Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS or gcloud
// auth application-default login) and create, then delete, a dataset of their own.
const RealProjectEnv = "SLUICE_TEST_BIGQUERY_PROJECT"

// TestRealBigQuery runs the sink conformance suite (exactly once and at least once) against
// real BigQuery when SLUICE_TEST_BIGQUERY_PROJECT is set: what the loopback server and the
// emulator model, checked against the service itself (docs/bigquery.md).
func TestRealBigQuery(t *testing.T) {
	project := os.Getenv(RealProjectEnv)
	if project == "" {
		t.Skipf("set %s (and Application Default Credentials) to run against real BigQuery", RealProjectEnv)
	}
	ctx := context.Background()
	cl, err := bigquery.NewClient(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ds := cl.Dataset(fmt.Sprintf("sluice_test_%d", time.Now().UnixNano()))
	if err := ds.Create(ctx, &bigquery.DatasetMetadata{DefaultTableExpiration: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ds.DeleteWithContents(context.Background()) })
	state := t.TempDir()
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			table := "conformance_" + string(d)
			connectortest.TestSink(t, connectortest.SinkTarget{
				Delivery: d,
				New: func(t *testing.T) component.Sink {
					src := fmt.Sprintf("type: WriteToBigQuery\nconfig:\n  table: %s:%s.%s\n  checkpoint_dir: %s\n", project, ds.DatasetID, table, state)
					b := componenttest.Env{File: "pipeline.yaml", Options: component.Options{Delivery: d}}.Build(t, "", src, connectortest.Schema)
					if err := b.Err(); err != nil || b.Component == nil {
						t.Fatalf("build: %v", err)
					}
					return b.Component.(component.Sink)
				},
				Visible: func(t *testing.T) []int64 {
					q := cl.Query(fmt.Sprintf("SELECT id FROM `%s.%s.%s`", project, ds.DatasetID, table))
					it, err := q.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					var ids []int64
					for {
						var row struct{ ID int64 }
						if err := it.Next(&row); err == iterator.Done {
							break
						} else if err != nil {
							t.Fatal(err)
						}
						ids = append(ids, row.ID)
					}
					slices.Sort(ids)
					return ids
				},
			})
		})
	}
}
