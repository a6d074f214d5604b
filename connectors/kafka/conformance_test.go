package kafka

import (
	"encoding/json"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { connectortest.TestSink(t, conformanceTarget(t, d)) })
		t.Run(string(d)+"/shared", func(t *testing.T) { connectortest.TestSharedSink(t, conformanceTarget(t, d)) })
	}
}

// conformanceTarget is a WriteToKafka sink writing JSON to a new topic.
func conformanceTarget(t *testing.T, d component.Delivery) connectortest.SinkTarget {
	topic := newTopic(t, 2)
	return connectortest.SinkTarget{
		Delivery: d,
		New: func(t *testing.T) component.Sink {
			b := componenttest.Env{File: testFile, Name: "out"}.Build(t, "",
				"type: WriteToKafka\nconfig:\n"+config(topic, "format: JSON"), connectortest.Schema)
			if b.Err() != nil {
				t.Fatal(b.Err())
			}
			return b.Component.(*sink)
		},
		Visible: func(t *testing.T) []int64 {
			var ids []int64
			for _, values := range readTopicAt(t, testBroker, topic, true) {
				for _, v := range values {
					var r struct{ ID int64 }
					if err := json.Unmarshal([]byte(v), &r); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, r.ID)
				}
			}
			return ids
		},
	}
}
