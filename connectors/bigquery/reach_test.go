package bigquery

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// A BigQuery API or Storage Write API that is down at start fails Open at once, naming it, as
// unreachable (so the runner waits for it up to --startup-timeout), instead of the client
// retrying it silently for minutes.
func TestOpenTellsAServiceThatIsDown(t *testing.T) {
	f := newFakeBQ(t)
	const down = "127.0.0.1:1" // tcpmux: nothing listens there
	cases := []struct {
		name, endpoint, storage, want string
	}{
		{"api", "http://" + down + "/bigquery/v2/", f.srv.GRPCAddr(), "read table " + testProject + ".ds.t from the BigQuery API at http://" + down + "/bigquery/v2/: dial tcp " + down},
		{"storage", f.srv.HTTPURL() + "/bigquery/v2/", down, "reach the BigQuery Storage Write API at " + down + " (storage_endpoint): dial tcp " + down},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fmt.Sprintf("type: WriteToBigQuery\nconfig:\n  table: %s:ds.t\n  endpoint: %s\n  storage_endpoint: %s\n  checkpoint_dir: %s\n",
				testProject, c.endpoint, c.storage, t.TempDir())
			b := componenttest.Env{File: "pipeline.yaml"}.Build(t, "", cfg, connectortest.Schema)
			if err := b.Err(); err != nil {
				t.Fatal(err)
			}
			s := b.Component.(*sink)
			ctx := context.Background()
			defer s.Close(ctx)
			start := time.Now()
			_, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 1})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Open took %v to fail", took)
			}
			if err == nil || !component.Unreachable(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open: %v\nwant an unreachable service and %q", err, c.want)
			}
		})
	}
}
