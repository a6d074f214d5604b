// Package confluent is the Confluent wire format (a magic byte and a 4-byte schema id before
// each encoded value: Split, Header) and a client of a Confluent schema registry (Registry,
// on franz-go's pkg/sr). The client never shows credentials in its errors; failures of the
// registry itself wrap ErrUnavailable, and those that waiting may end are also
// internal/outage.ErrUnavailable (component.ErrUnavailable). It decodes nothing itself:
// formats joins it with the codecs of schemas/avro and the JSON codec.
package confluent
