package combine

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/window"
)

// BenchmarkCombineSumFixed60s adds 1M rows of 10k keys to a Combine (sum by key, fixed 60 s
// windows) in batches of 1000 and fires after every batch at a watermark 5 s behind, as a
// lane would. It reports ns and allocations per row.
func BenchmarkCombineSumFixed60s(b *testing.B) {
	const rows, keys, batchSize = 1_000_000, 10_000, 1000
	p := mustBuild(b, "Combine", "config: {group_by: user, combine: {n: sum}}", clicks)
	users := make([]string, keys)
	for i := range users {
		users[i] = fmt.Sprintf("user-%05d", i)
	}
	start := time.Unix(1_700_000_000, 0)
	var batches []*schemas.Batch
	for i := 0; i < rows; i += batchSize {
		bt := &schemas.Batch{Schema: clicks}
		for j := i; j < i+batchSize; j++ {
			// 1 ms apart, 2 s out of order within a batch: 1000 s, about 17 windows.
			at := start.Add(time.Duration(j)*time.Millisecond - time.Duration(j%7)*300*time.Millisecond)
			bt.Rows = append(bt.Rows, schemas.Row{users[(j*7919)%keys], int64(j % 100), 1.0, true})
			bt.Time = append(bt.Time, at)
			bt.Pos = append(bt.Pos, schemas.Position{Source: "kafka:bench", Offset: int64(j)})
		}
		batches = append(batches, bt)
	}
	fn := window.Fixed(60*time.Second, 0)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	fired := 0
	for range b.N {
		st := p.NewState(fn)
		for _, bt := range batches {
			if _, err := p.AddBatch(st, bt, nil); err != nil {
				b.Fatal(err)
			}
			fired += len(st.Fire(window.Nanos(bt.Time[len(bt.Time)-1]) - 5*sec))
		}
		fired += len(st.Fire(window.MaxWatermark))
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	n := float64(b.N) * rows
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/row")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/row")
	b.ReportMetric(float64(fired)/float64(b.N), "results/op")
}
