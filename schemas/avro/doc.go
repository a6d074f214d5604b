// Package avro is sluice's Avro codec: an Avro record schema read into a schemas.Schema
// (ParseSchema), the binary encoding of rows read and written with it (Codec), values written
// with another schema read as Avro's schema resolution says (Codec.Resolve), and the Avro
// schema derived from a row schema (SchemaFor). It knows nothing of where values come from:
// Kafka's Confluent wire format is schemas/confluent's, the config block formats'.
// docs/schemas.md says how Avro types map onto row types.
package avro
