package iceberg

import (
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			w := newWarehouse(t)
			connectortest.TestSink(t, connectortest.SinkTarget{
				Delivery: d,
				New: func(t *testing.T) component.Sink {
					return w.build(connectortest.Schema, "db.conformance")
				},
				Visible: func(t *testing.T) []int64 {
					return w.ids("db.conformance")
				},
			})
		})
	}
}
