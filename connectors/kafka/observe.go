package kafka

import (
	"errors"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// This file is what ReadFromKafka and WriteToKafka tell an operator (docs/operations.md,
// "Metrics"): where each partition started and why, where it is, what the sink wrote, and
// franz-go's own client metrics (kprom) on the run's registry.

// kpromNamespace prefixes franz-go's client metrics: sluice_kafka_read_bytes_total, ...
const kpromNamespace = "sluice_kafka"

// clientMetrics is where a component's data client (the source's consumer, the sink's
// producer) registers franz-go's metrics; the admin clients are not measured.
type clientMetrics struct {
	reg    prometheus.Registerer
	labels prometheus.Labels
}

// hooks returns the client option that measures a new client, or none. Every client gets its
// own kprom.Metrics, which registers its collectors when the client starts and unregisters them
// when it closes.
func (m *clientMetrics) hooks() []kgo.Opt {
	if m == nil {
		return nil
	}
	return []kgo.Opt{kgo.WithHooks(kprom.NewMetrics(kpromNamespace, kprom.Registerer(tolerant{m.reg}), kprom.WithStaticLabel(m.labels)))}
}

// instrument keeps the registry for the data clients. The labels name both roles, one of them
// empty, so that a consumer's and a producer's families have the same label names, as a
// registry requires.
func (s *settings) instrument(reg prometheus.Registerer, labels prometheus.Labels) {
	l := prometheus.Labels{"source": "", "sink": ""}
	for k, v := range labels {
		l[k] = v
	}
	s.metrics = &clientMetrics{reg: reg, labels: l}
}

// tolerant registers like its registry but never panics: kprom registers through MustRegister,
// and a client opened again before the old one's collectors went (a reconnect) replaces them
// instead of stopping the process.
type tolerant struct{ prometheus.Registerer }

func (t tolerant) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		err := t.Register(c)
		var dup prometheus.AlreadyRegisteredError
		if errors.As(err, &dup) {
			t.Unregister(dup.ExistingCollector)
			_ = t.Register(c)
		}
	}
}

// Instrument measures the source's consumer (component.Instrumented).
func (s *source) Instrument(reg prometheus.Registerer, labels prometheus.Labels) {
	s.set.instrument(reg, labels)
}

// Instrument measures the sink's producer (component.Instrumented).
func (s *sink) Instrument(reg prometheus.Registerer, labels prometheus.Labels) {
	s.set.instrument(reg, labels)
}

// Starts returns where each partition started in this run and why (component.Progress).
func (s *source) Starts() []component.Start {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.starts)
}

// Position returns the next offset of every partition (component.Progress).
func (s *source) Position() schemas.Offsets { return s.Offsets() }

// Written returns the bytes of the keys and values the sink produced (component.Measured);
// Kafka has no files.
func (s *sink) Written() (files, bytes int64) { return 0, s.bytes.Load() }
