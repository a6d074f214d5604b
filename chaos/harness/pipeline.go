package harness

import (
	"fmt"
	"path/filepath"
)

// The records the producer writes: {"id": N, "name": "user-...", "amount": X.5}; the pipeline
// appends doubled = amount * 2, which every reader checks.
const inputTopic, outputTopic = "in", "out"

// pipelineYAML is the scenario's pipeline: ReadFromKafka (in a consumer group when grouped)
// -> MapToFields -> the sink.
func (sc *scenario) pipelineYAML() string {
	group := ""
	if sc.spec.grouped() {
		group = fmt.Sprintf("      consumer_config:\n        group.id: chaos_%s\n        session.timeout.ms: \"%d\"\n",
			sc.spec.name(), sessionTimer.Milliseconds())
	}
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
  transforms:
    - type: MapToFields
      config:
        append: true
        fields:
          doubled: amount * 2
%soptions:
  name: chaos_%s
  delivery: %s
  checkpoint_interval: 300ms
  drain_timeout: %s
`, sc.broker.addr, inputTopic, group, sc.sinkYAML(), sc.spec.name(), sc.spec.delivery, copyDrainTimeout)
}

// sinkYAML is the sink block of the pipeline, indented by 2.
func (sc *scenario) sinkYAML() string {
	switch sc.spec.sink {
	case SinkKafka:
		return fmt.Sprintf(`  sink:
    type: WriteToKafka
    config:
      bootstrap_servers: %s
      topic: %s
      format: JSON
`, sc.broker.addr, outputTopic)
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

const icebergTable, icebergCatalogName = "db.events", "chaos"

func (sc *scenario) icebergCatalog() string   { return filepath.Join(sc.dir, "catalog.db") }
func (sc *scenario) icebergWarehouse() string { return filepath.Join(sc.dir, "warehouse") }
func (sc *scenario) filesDir() string         { return filepath.Join(sc.dir, "out") }
func (sc *scenario) bqTable() string          { return "events_" + sc.spec.delivery }
