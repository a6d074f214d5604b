package mapping

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// gameEvents is a GAME_EVENT-like schema (Google's Streaming Data Generator): ids, times,
// strings and numbers, about 1 KiB per record with its payload.
var gameEvents = schemas.New(
	schemas.Field{Name: "event_id", Type: typ(schemas.String)},
	schemas.Field{Name: "user_id", Type: typ(schemas.String)},
	schemas.Field{Name: "session_id", Type: typ(schemas.String)},
	schemas.Field{Name: "game_id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "event_type", Type: typ(schemas.String)},
	schemas.Field{Name: "event_ts", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "ingest_ts", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "level", Type: typ(schemas.Int64)},
	schemas.Field{Name: "score", Type: typ(schemas.Int64)},
	schemas.Field{Name: "duration_ms", Type: typ(schemas.Int64)},
	schemas.Field{Name: "coins", Type: typ(schemas.Int64), Nullable: true},
	schemas.Field{Name: "country", Type: typ(schemas.String)},
	schemas.Field{Name: "platform", Type: typ(schemas.String)},
	schemas.Field{Name: "device", Type: typ(schemas.String)},
	schemas.Field{Name: "app_version", Type: typ(schemas.String)},
	schemas.Field{Name: "latitude", Type: typ(schemas.Float64)},
	schemas.Field{Name: "longitude", Type: typ(schemas.Float64)},
	schemas.Field{Name: "is_premium", Type: typ(schemas.Bool)},
	schemas.Field{Name: "payload", Type: typ(schemas.String)},
	schemas.Field{Name: "tags", Type: strArray},
)

func gameEventBatch(n int) *schemas.Batch {
	types := []string{"level_up", "purchase", "heartbeat", "match_end"}
	platforms := []string{"ios", "android", "web"}
	rows := make([]schemas.Row, n)
	for i := range rows {
		ts := time.Date(2024, 5, 1, 10, 0, i%60, 0, time.UTC)
		rows[i] = schemas.Row{
			fmt.Sprintf("6f1c2a7e-%04x-4b8e-9d3f-%012x", i%65536, i),
			fmt.Sprintf("user-%08d", i*7919%1000003),
			fmt.Sprintf("session-%016x", i*104729),
			int64(i % 50), types[i%len(types)], ts, ts.Add(1500 * time.Millisecond),
			int64(i % 10), int64(i * 37 % 10000), int64(1000 + i%120000), int64(i % 3000),
			"de", platforms[i%len(platforms)], "Pixel 8 Pro", "3.14.159",
			52.52 + float64(i%100)/1000, 13.405 + float64(i%100)/1000, i%5 == 0,
			strings.Repeat("x", 600), []any{"ranked", "season-12"},
		}
	}
	return batch(gameEvents, rows...)
}

// BenchmarkMapFilter runs MapToFields (5 computed fields, appended) and Filter over batches
// of 500 GAME_EVENT-like records.
func BenchmarkMapFilter(b *testing.B) {
	mapper, _ := mustBuild(b, "MapToFields", `
config:
  append: true
  fields:
    score_per_min: score / (duration_ms / 60000.0)
    latency_ms: (ingest_ts - event_ts).Milliseconds()
    whale: (coins ?? 0) > 1000 && is_premium
    label: event_type + ":" + platform
    country_uc: upper(country)`, gameEvents)
	filter, _ := mustBuild(b, "Filter", `
config:
  keep: level >= 3 && event_type != "heartbeat"`, mapper.(*mapToFields).out)
	in := gameEventBatch(500)
	ctx := context.Background()
	kept := 0
	toFilter := func(_ string, m *schemas.Batch) error {
		return filter.Process(ctx, 0, m, func(_ string, f *schemas.Batch) error {
			kept += len(f.Rows)
			return nil
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := mapper.Process(ctx, 0, in, toFilter); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(in.Rows))/b.Elapsed().Seconds(), "rows/s")
	if kept == 0 {
		b.Fatal("nothing kept")
	}
}
