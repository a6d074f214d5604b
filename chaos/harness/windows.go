package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The windows scenario (SinkWindows) runs a keyed grouping across copies: ReadFromKafka ->
// key = id % windowKeys -> Combine (count and sum of ids per key in fixed windows of
// windowSize, on the records' Kafka timestamps) -> ExtractWindowingInfo -> WriteToKafka,
// exactly once, which goes through a repartition topic (docs/scaling.md). Its count is per
// (key, window): each must come exactly once, with the count and sum worked out from the
// input topic; and a run of one copy without a group over the same input must give the same
// rows.
const (
	windowKeys    = 11
	windowSize    = 2 * time.Second
	windowLate    = 10 * time.Second // allowed lateness: origins first seen after a window fired
	singleOutput  = "out-single"
	singleSuffix  = "_single"
	windowsFields = "key, n, total, window_start"
)

// windowTransforms is the windows pipeline's transforms block, indented by 2.
func windowTransforms() string {
	return fmt.Sprintf(`  transforms:
    - type: MapToFields
      config:
        fields:
          key: id %% %d
          id: id
    - type: Combine
      windowing: {type: fixed, size: %s, allowed_lateness: %s}
      config:
        group_by: [key]
        combine:
          n: {value: id, fn: count}
          total: {value: id, fn: sum}
    - type: ExtractWindowingInfo
      config: {fields: [window_start]}
`, windowKeys, windowSize, windowLate)
}

// window is one (key, window) and its totals.
type window struct {
	Key   int64
	Start int64 // Unix ms
}

type totals struct{ N, Total int64 }

// expectedWindows works out every (key, window)'s totals from the input topic.
func expectedWindows(ctx context.Context, addr string) (map[window]totals, error) {
	want := map[window]totals{}
	size := windowSize.Milliseconds()
	var bad error
	err := eachRecord(ctx, addr, inputTopic, false, func(r *kgo.Record) {
		var v struct{ ID int64 }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			bad = fmt.Errorf("input record %s: %w", r.Value, err)
			return
		}
		ms := r.Timestamp.UnixMilli()
		w := window{Key: v.ID % windowKeys, Start: ms - ms%size}
		t := want[w]
		want[w] = totals{t.N + 1, t.Total + v.ID}
	})
	if err == nil {
		err = bad
	}
	return want, err
}

// windowRows reads the windows a pipeline wrote to topic, each with how often it came.
func windowRows(ctx context.Context, addr, topic string) (map[window][]totals, int, string, error) {
	got := map[window][]totals{}
	bad, firstBad := 0, ""
	err := eachRecord(ctx, addr, topic, true, func(r *kgo.Record) {
		var v struct {
			Key, N, Total *int64
			WindowStart   *time.Time `json:"window_start"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Key == nil || v.N == nil || v.Total == nil || v.WindowStart == nil {
			if bad++; bad == 1 {
				firstBad = fmt.Sprintf("%.200s (want %s; %v)", r.Value, windowsFields, err)
			}
			return
		}
		w := window{Key: *v.Key, Start: v.WindowStart.UnixMilli()}
		got[w] = append(got[w], totals{*v.N, *v.Total})
	})
	return got, bad, firstBad, err
}

// readWindows counts the windows of the copies' output against the input, and runs one copy
// without a group over the same input to compare its rows.
func (sc *scenario) readWindows(ctx context.Context) error {
	want, err := expectedWindows(ctx, sc.broker.addr)
	if err != nil {
		return err
	}
	got, bad, firstBad, err := windowRows(ctx, sc.broker.addr, outputTopic)
	if err != nil {
		return err
	}
	c := Count{Expected: len(want), Extra: bad}
	wrong := 0
	for w, ts := range got {
		c.Seen += len(ts)
		c.Duplicates += len(ts) - 1
		t, ok := want[w]
		switch {
		case !ok:
			c.Extra += len(ts)
		case ts[0] != t:
			c.Extra++
			if wrong++; wrong == 1 {
				sc.note("key %d window %s: %d records summing to %d, want %d summing to %d", w.Key,
					time.UnixMilli(w.Start).UTC().Format(time.TimeOnly), ts[0].N, ts[0].Total, t.N, t.Total)
			}
		}
	}
	for w := range want {
		if len(got[w]) == 0 {
			c.Missing++
		}
	}
	sc.res.Count = c
	if bad > 0 {
		sc.fail("%d rows are not what the pipeline writes, the first: %s", bad, firstBad)
	}
	sc.logf("counted windows: %+v", c)
	return sc.compareSingleCopy(ctx, got)
}

// compareSingleCopy runs the pipeline once without a consumer group (no repartition topic)
// over the whole input and fails the scenario when its windows differ from the copies'.
func (sc *scenario) compareSingleCopy(ctx context.Context, copies map[window][]totals) error {
	path := filepath.Join(sc.dir, "single.yaml")
	if err := os.WriteFile(path, []byte(sc.windowsYAML("", singleSuffix, singleOutput)), 0o644); err != nil {
		return fmt.Errorf("write the single-copy pipeline: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(rctx, sc.bin, "run", path, "--stop-at-end").CombinedOutput()
	_ = os.WriteFile(filepath.Join(sc.logDir, "single.log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("the single-copy run: %w: %s", err, lastLine(filepath.Join(sc.logDir, "single.log")))
	}
	single, _, _, err := windowRows(ctx, sc.broker.addr, singleOutput)
	if err != nil {
		return err
	}
	differ := 0
	for _, w := range slices.Collect(maps.Keys(single)) {
		if !slices.Equal(single[w], copies[w]) {
			differ++
		}
	}
	for w := range copies {
		if _, ok := single[w]; !ok {
			differ++
		}
	}
	if differ > 0 {
		sc.fail("one copy without a group gave %d windows, %d of them differ from the copies' %d", len(single), differ, len(copies))
	}
	sc.logf("one copy without a group gave the same %d windows", len(single))
	return nil
}
