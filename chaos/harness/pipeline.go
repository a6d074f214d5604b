package harness

import (
	"fmt"
	"path/filepath"
)

// The records the producer writes: {"id": N, "name": "user-...", "amount": X.5}; the pipeline
// appends doubled = amount * 2, which every reader checks.
const inputTopic, outputTopic = "in", "out"

// pipelineYAML is the scenario's pipeline: ReadFromKafka (in a consumer group when grouped)
// -> MapToFields -> the sink, or the windows scenario's (windows.go).
func (sc *scenario) pipelineYAML() string {
	group := ""
	if sc.spec.grouped() {
		group = fmt.Sprintf("      consumer_config:\n        group.id: %s\n        session.timeout.ms: \"%d\"\n",
			sc.group(), sessionTimer.Milliseconds())
	}
	if sc.spec.sink == SinkWindows {
		return sc.windowsYAML(group, "", outputTopic)
	}
	return sc.render(group, mapTransforms, sc.sinkYAML(), "")
}

// group is the copies' consumer group.
func (sc *scenario) group() string { return "chaos_" + sc.spec.name() }

// windowsYAML is the windows scenario's pipeline, named with suffix, writing topic.
func (sc *scenario) windowsYAML(group, suffix, topic string) string {
	return sc.render(group, windowTransforms(), sc.kafkaSinkYAML(topic), suffix)
}

// mapTransforms is the transforms block of every scenario but the windows one.
const mapTransforms = `  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
          doubled: amount * 2
`

// render is a pipeline reading the input topic with group (a consumer_config block, or "")
// through transforms into sink, named chaos_<scenario><suffix>.
func (sc *scenario) render(group, transforms, sink, suffix string) string {
	return fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
      auto_offset_reset_config: earliest
%s      schema:
        type: object
        properties:
          id: {type: integer}
          name: {type: string}
          amount: {type: number}
%s%soptions:
  name: chaos_%s%s
  delivery: %s
  checkpoint_interval: 300ms
  drain_timeout: %s
`, sc.broker.addr, inputTopic, group, transforms, sink, sc.spec.name(), suffix, sc.spec.delivery, copyDrainTimeout)
}

// sinkYAML is the sink block of the pipeline, indented by 2.
func (sc *scenario) sinkYAML() string {
	switch sc.spec.sink {
	case SinkKafka:
		return sc.kafkaSinkYAML(outputTopic)
	case SinkIceberg:
		return fmt.Sprintf(`  sink:
    type: WriteToIceberg
    config:
      table: %s
      triggering_frequency_seconds: 0.3
      catalog_name: %s
      catalog_properties:
        type: sql
        uri: %s
        warehouse: %s
`, icebergTable, icebergCatalogName, sc.icebergCatalog(), sc.icebergWarehouse())
	case SinkBigQuery:
		return fmt.Sprintf(`  sink:
    type: WriteToBigQuery
    config:
      table: %s:%s.%s
      endpoint: %s/bigquery/v2/
      storage_endpoint: %s
      triggering_frequency_seconds: 0.3
`, sc.bq.project, sc.bq.dataset, sc.bqTable(), sc.bq.rest, sc.bq.grpc)
	}
	return fmt.Sprintf(`  sink:
    type: WriteToJson
    config:
      path: %s
`, sc.filesDir())
}

// kafkaSinkYAML is a WriteToKafka sink block writing topic, indented by 2.
func (sc *scenario) kafkaSinkYAML(topic string) string {
	return fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
`, sc.broker.addr, topic)
}

const icebergTable, icebergCatalogName = "db.events", "chaos"

func (sc *scenario) icebergCatalog() string   { return filepath.Join(sc.dir, "catalog.db") }
func (sc *scenario) icebergWarehouse() string { return filepath.Join(sc.dir, "warehouse") }
func (sc *scenario) filesDir() string         { return filepath.Join(sc.dir, "out") }
func (sc *scenario) bqTable() string          { return "events_" + sc.spec.delivery }
