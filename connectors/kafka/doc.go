// Package kafka holds the Kafka connectors, built on franz-go: ReadFromKafka reads every
// partition of its topics, each record positioned by topic, partition and offset, and decodes
// RAW, STRING, JSON and Avro payloads into rows in the lanes; WriteToKafka writes rows as RAW,
// JSON or Avro records, at least once with an idempotent producer, or exactly once with one
// transaction per epoch that also holds the sink's checkpoint.
//
// Checkpoints live in the compacted topic __sluice_checkpoints, one key per pipeline and sink,
// so a sink restores what it committed without any other store, whatever the source.
// `bootstrap_servers: embedded` uses the process's in-process broker (internal/embedded).
// docs/kafka.md describes the config, the Java properties understood, and the commit protocol.
package kafka
