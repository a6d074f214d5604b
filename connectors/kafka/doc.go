// Package kafka holds the Kafka connectors, built on franz-go: ReadFromKafka reads every
// partition of its topics, each record positioned by topic, partition and offset, and decodes
// RAW, STRING, JSON and Avro payloads into rows in the lanes; WriteToKafka writes rows as RAW,
// JSON or Avro records, at least once with an idempotent producer, or exactly once with one
// transaction per epoch that also holds the sink's checkpoint.
//
// With confluent_schema_registry_url both speak the Confluent wire format: the reader decodes
// each value with its writer's schema from the registry (pkg/sr), resolved to the reader's
// schema as Avro's schema resolution says; the writer registers its schema and heads every
// value with its id. Both connect over TLS and SASL (PLAIN, SCRAM) as Java's security
// properties say; secrets, also those read from ${env:NAME}, never appear in messages.
//
// Checkpoints live in the compacted topic __sluice_checkpoints, one key per pipeline and sink,
// so a sink restores what it committed without any other store, whatever the source.
// `bootstrap_servers: embedded` uses the process's in-process broker (internal/embedded).
// docs/kafka.md describes the config, the Java properties understood, the schema registry,
// TLS and SASL, and the commit protocol.
package kafka
