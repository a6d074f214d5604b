package runner

import (
	"strings"
	"testing"
	"time"
)

// A loop that stays away longer than 3 intervals (at least a minute) makes the run not alive;
// coming round again makes it alive.
func TestHealthStuckLoop(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	h := NewHealth()
	h.now = func() time.Time { return at }
	h.started(10 * time.Second) // allowed: the minimum, 1 minute
	at = at.Add(59 * time.Second)
	if err := h.Live(); err != nil {
		t.Fatalf("59 s after the last loop with 10 s epochs: Live() = %v, want alive", err)
	}
	at = at.Add(2 * time.Second)
	if err := h.Live(); err == nil || !strings.Contains(err.Error(), "has not come round for 1m1s") {
		t.Fatalf("61 s after the last loop: Live() = %v, want stuck for 1m1s", err)
	}
	h.loop()
	if err := h.Live(); err != nil {
		t.Fatalf("after the loop came round: Live() = %v", err)
	}
	h.started(time.Minute) // 3 intervals: 3 minutes
	at = at.Add(179 * time.Second)
	if err := h.Live(); err != nil {
		t.Fatalf("179 s with 1 m epochs: Live() = %v, want alive", err)
	}
	at = at.Add(2 * time.Second)
	if h.Live() == nil {
		t.Fatal("181 s with 1 m epochs: alive, want stuck")
	}
}
