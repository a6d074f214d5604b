package iceberg

import (
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { connectortest.TestSink(t, conformanceTarget(newWarehouse(t), d)) })
		t.Run(string(d)+"/shared", func(t *testing.T) { connectortest.TestSharedSink(t, conformanceTarget(newWarehouse(t), d)) })
	}
}

// TestHadoopSinkConformance runs the exactly-once suites on a Hadoop (file-system) catalog.
func TestHadoopSinkConformance(t *testing.T) {
	d := component.ExactlyOnce
	t.Run(string(d), func(t *testing.T) { connectortest.TestSink(t, conformanceTarget(newHadoopWarehouse(t), d)) })
	t.Run(string(d)+"/shared", func(t *testing.T) { connectortest.TestSharedSink(t, conformanceTarget(newHadoopWarehouse(t), d)) })
}

// conformanceTarget is a WriteToIceberg sink writing a table of warehouse w.
func conformanceTarget(w warehouse, d component.Delivery) connectortest.SinkTarget {
	return connectortest.SinkTarget{
		Delivery: d,
		New:      func(t *testing.T) component.Sink { return w.build(connectortest.Schema, "db.conformance") },
		Visible:  func(t *testing.T) []int64 { return w.ids("db.conformance") },
	}
}
