package bigquery

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/connectortest"
)

// sluice status reads what the sink committed from its state file, and shows the checkpoint
// before a commit a crash interrupted until a run settles it.
func TestReadCheckpoint(t *testing.T) {
	f, _ := interrupted(t, "intent-saved")
	s := f.build(connectortest.Schema, "t")
	cp, at, err := s.ReadCheckpoint(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil || cp.Epoch != 1 || cp.Next["test:in"][0] != 10 || time.Since(at) > time.Minute {
		t.Fatalf("checkpoint %+v at %v, want epoch 1 at offset 10, saved just now", cp, at)
	}
	if cp, _, err := s.ReadCheckpoint(context.Background(), "other"); err != nil || cp != nil {
		t.Fatalf("another pipeline: checkpoint %+v, %v; want none", cp, err)
	}
}
