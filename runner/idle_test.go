package runner_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas"
)

// A test source standing in for a quiet Kafka topic: it returns count records, then its Read
// waits for data until its context ends, as a consumer's poll does.
type trickleConfig struct {
	Count int `yaml:"count" required:"true"`
	// StallMS makes Read, once the records are out, ignore its context for this long: a
	// misbehaving source that holds up a graceful stop.
	StallMS int `yaml:"stall_ms"`
}

type trickle struct {
	name   string
	schema *schemas.Schema
	count  int
	stall  time.Duration
	next   int64
}

func init() {
	component.RegisterSource("TestTrickle", "test source: count records, then waits for more",
		func(c *component.Context, cfg *trickleConfig) (component.Source, error) {
			s := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}})
			c.Output(component.Main, s)
			return &trickle{name: "trickle:" + c.Name, schema: s, count: cfg.Count, stall: time.Duration(cfg.StallMS) * time.Millisecond}, nil
		})
}

func (t *trickle) Open(_ context.Context, from schemas.Offsets) error {
	t.next, _ = from.Get(t.name, 0)
	return nil
}

func (t *trickle) Read(ctx context.Context) (*schemas.Batch, error) {
	if t.next >= int64(t.count) {
		time.Sleep(t.stall)
		<-ctx.Done() // nothing more arrives
		return nil, ctx.Err()
	}
	b := &schemas.Batch{Schema: t.schema}
	for ; t.next < int64(t.count); t.next++ {
		b.Rows = append(b.Rows, schemas.Row{t.next})
		b.Pos = append(b.Pos, schemas.Position{Source: t.name, Offset: t.next})
		b.Time = append(b.Time, time.Unix(0, 0))
	}
	return b, nil
}

func (t *trickle) Offsets() schemas.Offsets {
	o := schemas.Offsets{}
	o.Set(t.name, 0, t.next)
	return o
}

func (t *trickle) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	return emit(component.Main, b)
}

func (t *trickle) Close() error { return nil }

var _ io.Closer = (*trickle)(nil)

// start runs the pipeline at path in the background; wait returns its error, failing the
// test when the run has not ended within 10 s.
func start(t *testing.T, path string, cfg runner.RunConfig) (wait func(what string) error) {
	done := make(chan error, 1)
	go func() {
		_, err := execute(t, path, cfg)
		done <- err
	}()
	return func(what string) error {
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the run did not end within 10 s", what)
			return nil
		}
	}
}

// Records read before a quiet period are committed while the source waits for more: a barrier
// interrupts the waiting Read.
func TestQuietSourceStillCommits(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 5}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options: {checkpoint_interval: 20ms}
`)
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop})
	deadline := time.Now().Add(10 * time.Second)
	for len(committedIDs(t, filepath.Join(dir, "out"))) < 5 {
		if time.Now().After(deadline) {
			t.Fatal("the records of a source that went quiet were not committed within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	if err := wait("a graceful stop of a quiet source"); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, "out", committedIDs(t, filepath.Join(dir, "out")), 5)
}

// A failure in a lane ends the run with its error even while a reader waits for data.
func TestFailureEndsRunWhileSourceWaits(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 3}
  transforms:
    - type: MapToFields
      config:
        fields: {r: 10 / id}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
`)
	err := start(t, path, runner.RunConfig{})("a run whose lane failed")
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("want the division by zero, got %v", err)
	}
}

// A graceful stop that cannot commit within drain_timeout gives up with ErrDrainTimeout, and
// commits nothing of the epoch it could not finish.
func TestDrainTimeout(t *testing.T) {
	dir := t.TempDir()
	path := pipelineFile(t, dir, `
pipeline:
  type: chain
  source:
    type: TestTrickle
    config: {count: 5, stall_ms: 1500}
  sink:
    type: WriteToJson
    config: {path: {dir}/out}
options: {checkpoint_interval: 1h, drain_timeout: 100ms}
`)
	stop := make(chan struct{})
	wait := start(t, path, runner.RunConfig{Stop: stop})
	time.Sleep(50 * time.Millisecond)
	close(stop)
	if err := wait("a stop past its drain timeout"); !errors.Is(err, runner.ErrDrainTimeout) {
		t.Fatalf("want ErrDrainTimeout, got %v", err)
	}
	if ids := committedIDs(t, filepath.Join(dir, "out")); len(ids) != 0 {
		t.Errorf("%d rows committed by a stop that timed out", len(ids))
	}
}
