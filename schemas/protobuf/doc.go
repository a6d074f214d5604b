// Package protobuf is the Protocol Buffers codec of rows, for every connector that reads or
// writes protobuf messages: Load finds a message in a FileDescriptorSet, Schema maps it onto a
// row schema, a Decoder reads messages into rows and an Encoder writes rows as messages.
//
// The Encoder is the only row -> protobuf encoder of the project. It writes tags and values
// straight into a byte slice (protowire), compiled once per message and row schema, driven by
// the message's descriptor; Options let a destination convert values its own way (BigQuery's
// Storage Write API takes TIMESTAMP as int64 microseconds, NUMERIC as bytes, ...) and match
// row fields to message fields its own way, while the wire writing (tags, lengths, packed and
// repeated fields, nested messages, maps) stays here.
//
// It imports schemas and third-party packages only, so that any connector can use it.
package protobuf
