package bigquery

import (
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			f := newFakeBQ(t)
			connectortest.TestSink(t, connectortest.SinkTarget{
				Delivery: d,
				New:      func(t *testing.T) component.Sink { return f.build(connectortest.Schema, "conformance") },
				Visible:  func(t *testing.T) []int64 { return f.ids("conformance") },
			})
		})
	}
}
