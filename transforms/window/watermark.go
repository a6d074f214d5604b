package window

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/internal/binread"
	"sort"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// DefaultIdleTimeout is how long a partition may go without records before it stops
// holding the watermark back, when the pipeline sets no other.
const DefaultIdleTimeout = time.Minute

// Tracker follows the event-time watermark of one lane. A partition's watermark is the
// largest event time read from it minus the allowed lateness; the lane's is the smallest
// over its partitions that are not idle (none read for the idle timeout). When every
// partition is idle it is the largest of theirs, so the tail of a stream that stopped
// still fires. The watermark never goes back. Processing time is passed in, so tests and
// replays control it. A Tracker is not safe for concurrent use.
type Tracker struct {
	lateness, idle int64
	parts          map[component.Partition]*partition
	last           int64
}

type partition struct {
	max  int64 // largest event time read; MinWatermark when none yet
	seen int64 // processing time of the last record, or of registration
}

// NewTracker returns a tracker for the allowed lateness and idle timeout (<= 0: partitions
// never count as idle).
func NewTracker(allowedLateness, idleTimeout time.Duration) *Tracker {
	return &Tracker{lateness: int64(allowedLateness), idle: int64(idleTimeout),
		parts: map[component.Partition]*partition{}, last: MinWatermark}
}

// Register declares a partition before its first record, so that it holds the watermark
// back until it has records or goes idle.
func (t *Tracker) Register(p component.Partition, now time.Time) {
	if _, ok := t.parts[p]; !ok {
		t.parts[p] = &partition{max: MinWatermark, seen: now.UnixNano()}
	}
}

// Forget removes a partition (revoked from this copy of the pipeline).
func (t *Tracker) Forget(p component.Partition) { delete(t.parts, p) }

// Observe records an event time read from partition p at processing time now.
func (t *Tracker) Observe(p component.Partition, eventTime int64, now time.Time) {
	st := t.parts[p]
	if st == nil {
		st = &partition{max: MinWatermark}
		t.parts[p] = st
	}
	st.max = max(st.max, eventTime)
	st.seen = now.UnixNano()
}

// ObserveBatch records the event times of a batch (Pos and Time aligned with its rows).
func (t *Tracker) ObserveBatch(b *schemas.Batch, now time.Time) {
	n := min(len(b.Pos), len(b.Time))
	for i := 0; i < n; i++ {
		p := component.Partition{Source: b.Pos[i].Source, Partition: b.Pos[i].Partition}
		t.Observe(p, b.Time[i].UnixNano(), now)
	}
}

// Watermark returns the lane's watermark at processing time now.
func (t *Tracker) Watermark(now time.Time) int64 {
	active, idle := MaxWatermark, MinWatermark
	anyActive := false
	for _, st := range t.parts {
		wm := st.max
		if wm != MinWatermark {
			wm -= t.lateness
		}
		if t.idle > 0 && now.UnixNano()-st.seen >= t.idle {
			idle = max(idle, wm)
			continue
		}
		anyActive = true
		active = min(active, wm)
	}
	wm := active
	if !anyActive {
		wm = idle
	}
	t.last = max(t.last, wm)
	return t.last
}

// Min returns the smallest of watermarks: an operator fed by several lanes fires at the
// minimum of theirs.
func Min(wms ...int64) int64 {
	m := MaxWatermark
	for _, w := range wms {
		m = min(m, w)
	}
	return m
}

var errTrackerSnapshot = errors.New("watermark snapshot is damaged")

// Snapshot encodes the largest event time of every partition and the last watermark, in a
// deterministic order, for a checkpoint. Idle state is processing time and is not kept.
func (t *Tracker) Snapshot() []byte {
	keys := make([]component.Partition, 0, len(t.parts))
	for p := range t.parts {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Source != keys[j].Source {
			return keys[i].Source < keys[j].Source
		}
		return keys[i].Partition < keys[j].Partition
	})
	b := binary.AppendVarint(nil, t.last)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, p := range keys {
		b = binary.AppendUvarint(b, uint64(len(p.Source)))
		b = append(b, p.Source...)
		b = binary.AppendVarint(b, int64(p.Partition))
		b = binary.AppendVarint(b, t.parts[p].max)
	}
	return b
}

// Restore replaces the tracker's partitions with those of a snapshot; they count as seen
// at now.
func (t *Tracker) Restore(b []byte, now time.Time) error {
	r := binread.Reader{B: b, Damaged: errTrackerSnapshot}
	last := r.Varint()
	n := r.Uvarint()
	parts := map[component.Partition]*partition{}
	for i := uint64(0); i < n && r.Err == nil; i++ {
		src := string(r.Bytes())
		p := component.Partition{Source: src, Partition: int32(r.Varint())}
		parts[p] = &partition{max: r.Varint(), seen: now.UnixNano()}
	}
	if r.Err != nil || len(r.B) != 0 {
		return fmt.Errorf("restore watermark: %w", errTrackerSnapshot)
	}
	t.parts, t.last = parts, last
	return nil
}
