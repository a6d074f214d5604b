// Package all registers every connector of sluice; import it for its side effects.
package all

import (
	_ "github.com/sluicehq/sluice/connectors/bigquery"  // WriteToBigQuery
	_ "github.com/sluicehq/sluice/connectors/create"    // Create
	_ "github.com/sluicehq/sluice/connectors/files"     // ReadFrom/WriteTo Text, Json, Csv, Avro, Parquet
	_ "github.com/sluicehq/sluice/connectors/generator" // StreamingDataGenerator
	_ "github.com/sluicehq/sluice/connectors/iceberg"   // WriteToIceberg
	_ "github.com/sluicehq/sluice/connectors/kafka"     // ReadFromKafka, WriteToKafka
)
