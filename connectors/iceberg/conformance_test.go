package iceberg

import (
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { connectortest.TestSink(t, conformanceTarget(t, d)) })
		t.Run(string(d)+"/shared", func(t *testing.T) { connectortest.TestSharedSink(t, conformanceTarget(t, d)) })
	}
}

// conformanceTarget is a WriteToIceberg sink writing a table of a new warehouse.
func conformanceTarget(t *testing.T, d component.Delivery) connectortest.SinkTarget {
	w := newWarehouse(t)
	return connectortest.SinkTarget{
		Delivery: d,
		New:      func(t *testing.T) component.Sink { return w.build(connectortest.Schema, "db.conformance") },
		Visible:  func(t *testing.T) []int64 { return w.ids("db.conformance") },
	}
}
