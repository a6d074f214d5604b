// Package formats is the layer between connectors and component that turns a connector's
// format keys into codecs: the shared config block (Config: schema, file_descriptor_path,
// message_name and the Confluent schema registry's URL and subject, as Beam's Kafka transforms
// spell them), its build-time checks reported at their file:line:col, and the decoders and
// encoders of formats RAW, STRING, JSON, AVRO and PROTO, also in the Confluent wire format with a
// schema registry. The codecs themselves are in schemas (JSON), schemas/avro,
// schemas/protobuf and schemas/confluent; this package knows the config and the
// component.Context.
package formats
