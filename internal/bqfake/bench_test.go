package bqfake

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/managedwriter"
)

// BenchmarkAppendRows pushes ~1 KiB rows through managedwriter into a _default stream,
// 500 rows an append, several appends in flight; it reports rows/s.
func BenchmarkAppendRows(b *testing.B) {
	for _, discard := range []bool{false, true} {
		b.Run(fmt.Sprintf("discard=%v", discard), func(b *testing.B) {
			var opts []Option
			if discard {
				opts = append(opts, DiscardRows())
			}
			srv, err := New(opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			schema := bigquery.Schema{
				{Name: "event_id", Type: bigquery.StringFieldType, Required: true},
				{Name: "user_id", Type: bigquery.IntegerFieldType},
				{Name: "ts", Type: bigquery.TimestampFieldType},
				{Name: "score", Type: bigquery.FloatFieldType},
				{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
				{Name: "payload", Type: bigquery.StringFieldType},
			}
			if err := srv.CreateTable(testProject, testDataset, "bench", schema); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			mw, err := managedwriter.NewClient(ctx, testProject, srv.WriteClientOptions()...)
			if err != nil {
				b.Fatal(err)
			}
			defer mw.Close()
			c := newCodec(b, schema)
			ms, err := mw.NewManagedStream(ctx, managedwriter.WithDestinationTable(tableParent("bench")),
				managedwriter.WithType(managedwriter.DefaultStream), managedwriter.WithSchemaDescriptor(c.dp))
			if err != nil {
				b.Fatal(err)
			}
			defer ms.Close()
			row := c.rows(b, fmt.Sprintf(`{"event_id": "e-123456", "user_id": 42, "ts": 1700000000000000, "score": 1.5,
				"tags": ["a", "b", "c"], "payload": %q}`, strings.Repeat("x", 900)))[0]
			batch := make([][]byte, 500)
			for i := range batch {
				batch[i] = row
			}
			b.SetBytes(int64(len(row) * len(batch)))
			b.ResetTimer()
			var pending []*managedwriter.AppendResult
			for i := 0; i < b.N; i++ {
				res, err := ms.AppendRows(ctx, batch)
				if err != nil {
					b.Fatal(err)
				}
				if pending = append(pending, res); len(pending) == 8 {
					for _, r := range pending {
						if _, err := r.GetResult(ctx); err != nil {
							b.Fatal(err)
						}
					}
					pending = pending[:0]
				}
			}
			for _, r := range pending {
				if _, err := r.GetResult(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
