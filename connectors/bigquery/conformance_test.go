package bigquery

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
	_ "github.com/sluicehq/sluice/connectors/kafka" // ReadFromKafka, whose checkpoint store shared sinks use
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			f := newFakeBQ(t)
			f.delivery = d
			connectortest.TestSink(t, connectortest.SinkTarget{
				Delivery: d,
				New:      func(t *testing.T) component.Sink { return f.build(connectortest.Schema, "conformance") },
				Visible:  func(t *testing.T) []int64 { return f.ids("conformance") },
			})
		})
		// Copies in a consumer group keep their states in a Kafka source's checkpoint store
		// (here on an in-process kfake broker), as a Kafka-fed pipeline does by default.
		t.Run(string(d)+"/shared", func(t *testing.T) {
			f := newFakeBQ(t)
			store := kafkaCheckpointStore(t)
			connectortest.TestSharedSink(t, connectortest.SinkTarget{
				Delivery: d,
				New: func(t *testing.T) component.Sink {
					b := componenttest.Env{File: "pipeline.yaml", Options: component.Options{Delivery: d}}.Build(t, "", f.storeConfig("shared"), connectortest.Schema)
					if err := b.Err(); err != nil {
						t.Fatalf("build: %v", err)
					}
					s := b.Component.(*sink)
					s.UseCheckpointStore(store)
					return s
				},
				Visible: func(t *testing.T) []int64 { return f.ids("shared") },
			})
		})
	}
}

// storeConfig is config without checkpoint_dir: the sink keeps its state in the checkpoint
// store it is given.
func (f *fakeBQ) storeConfig(table string) string {
	return fmt.Sprintf("type: WriteToBigQuery\nconfig:\n  table: %s:ds.%s\n  endpoint: %s\n  storage_endpoint: %s\n",
		testProject, table, f.srv.HTTPURL()+"/bigquery/v2/", f.srv.GRPCAddr())
}

// kafkaCheckpointStore is the checkpoint store of a ReadFromKafka on a broker of its own.
func kafkaCheckpointStore(t *testing.T) component.CheckpointStore {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	src := fmt.Sprintf("type: ReadFromKafka\nconfig:\n  bootstrap_servers: %s\n  topic: in\n  format: RAW\n", c.ListenAddrs()[0])
	b := componenttest.Env{File: "pipeline.yaml"}.Build(t, "", src)
	if err := b.Err(); err != nil {
		t.Fatalf("build ReadFromKafka: %v", err)
	}
	return b.Component.(component.CheckpointStores).CheckpointStore()
}
