package kafka

import (
	"encoding/json"
	"fmt"
	"slices"
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
			b := componenttest.Env{File: testFile, Name: "out", Options: component.Options{Delivery: d}}.Build(t, "",
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

func TestSourceConformance(t *testing.T) {
	const records = 60
	bad := []int{5, 22, 41}
	topic := newTopic(t, 3)
	for i := range records {
		v := fmt.Sprintf(`{"id": %d, "name": "row"}`, i)
		if slices.Contains(bad, i) {
			v = fmt.Sprintf(`{"id": "not a number %d"`, i)
		}
		produce(t, topic, int32(i%3), []byte(v))
	}
	connectortest.TestSource(t, connectortest.SourceTarget{Records: records, Bad: bad,
		New: func(t *testing.T, withErrors bool) component.Source {
			lines := []string{"format: JSON", "auto_offset_reset_config: earliest",
				"schema: {type: object, properties: {id: {type: integer}, name: {type: string}}, required: [id]}"}
			if withErrors {
				lines = append(lines, "error_handling: {output: "+connectortest.ErrorsTag+"}")
			}
			return build(t, "type: ReadFromKafka\nconfig:\n"+config(topic, lines...)).Component.(*source)
		}})
}
