// Package kafka holds the Kafka connectors, built on franz-go: ReadFromKafka reads every
// partition of its topics, each record positioned by topic, partition and offset, and decodes
// RAW, STRING, JSON, Avro and Protocol Buffers payloads into rows in the lanes; WriteToKafka
// writes rows as such records, at least once with an idempotent producer, or exactly once with
// one transaction per epoch that also holds the sink's checkpoint.
//
// The payload formats, also the Confluent wire format with a schema registry, are the
// formats package's (its Config block is embedded in both configs); this package hands it the
// topics and the registry credentials of its properties. Both connect over TLS and SASL
// (PLAIN, SCRAM) as Java's security properties say; secrets, also those read from
// ${env:NAME}, never appear in messages.
//
// Checkpoints live in the compacted topic __sluice_checkpoints, one key per pipeline and sink,
// so a sink restores what it committed without any other store, whatever the source.
// `bootstrap_servers: embedded` uses the process's in-process broker (internal/embedded).
// docs/kafka.md describes the config, the Java properties understood, the schema registry,
// TLS and SASL, and the commit protocol.
package kafka
