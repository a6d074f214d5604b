package generator

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// benchSource opens an unpaced, seeded GAME_EVENT generator.
func benchSource(b *testing.B) *Source {
	built := env.Build(b, "StreamingDataGenerator", "config: {schema_template: GAME_EVENT, seed: 1}")
	if err := built.Err(); err != nil {
		b.Fatal(err)
	}
	s := built.Component.(*Source)
	if err := s.Open(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return s
}

// reportRate reports messages per second and the rendered bytes per message.
func reportRate(b *testing.B, messages, bytes int) {
	b.ReportMetric(float64(messages)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(bytes)/float64(messages), "B/msg")
}

// BenchmarkGenerate is the source as the runner drives it: Read (render) then Decode (parse
// into rows), one batch of 1000 messages per iteration, on one goroutine.
func BenchmarkGeneratorGenerate(b *testing.B) {
	s := benchSource(b)
	ctx := context.Background()
	emit := func(string, *schemas.Batch) error { return nil }
	b.ReportAllocs()
	messages, bytes := 0, 0
	for b.Loop() {
		batch, err := s.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range batch.Raw {
			bytes += len(r)
		}
		messages += batch.Len()
		if err := s.Decode(ctx, batch, emit); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, messages, bytes)
}

// BenchmarkRead is Read alone: rendering, which runs on the source's reader goroutine.
func BenchmarkGeneratorRead(b *testing.B) {
	s := benchSource(b)
	b.ReportAllocs()
	messages, bytes := 0, 0
	for b.Loop() {
		batch, err := s.Read(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range batch.Raw {
			bytes += len(r)
		}
		messages += batch.Len()
	}
	reportRate(b, messages, bytes)
}

// BenchmarkDecode is Decode alone: parsing, which runs on a lane.
func BenchmarkGeneratorDecode(b *testing.B) {
	s := benchSource(b)
	batch, err := s.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	bytes := 0
	for _, r := range batch.Raw {
		bytes += len(r)
	}
	out := componenttest.Emitted{}
	b.ReportAllocs()
	messages := 0
	for b.Loop() {
		clear(out)
		if err := s.Decode(context.Background(), batch, out.Emit); err != nil {
			b.Fatal(err)
		}
		messages += batch.Len()
	}
	reportRate(b, messages, bytes*messages/batch.Len())
}
