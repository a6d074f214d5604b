package kafka

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// metadataFields are the fields with_metadata appends to each row, in this order.
var metadataFields = []schemas.Field{
	{Name: "kafka_key", Type: schemas.Type{Kind: schemas.Bytes}, Nullable: true},
	{Name: "kafka_topic", Type: schemas.Type{Kind: schemas.String}},
	{Name: "kafka_partition", Type: schemas.Type{Kind: schemas.Int64}},
	{Name: "kafka_offset", Type: schemas.Type{Kind: schemas.Int64}},
	{Name: "kafka_timestamp", Type: schemas.Type{Kind: schemas.Timestamp}},
	{Name: "kafka_headers", Type: schemas.Type{Kind: schemas.Map, Elem: &schemas.Type{Kind: schemas.String}}, Nullable: true},
}

// withMetadata returns the schema of rows with the metadata fields appended, or nil (reported)
// when the values already have a field of one of their names.
func withMetadata(ctx *component.Context, values *schemas.Schema) *schemas.Schema {
	fields := append([]schemas.Field(nil), values.Fields...)
	for _, f := range metadataFields {
		if _, clash := values.Index(f.Name); clash {
			ctx.Errorf(ctx.KeyPos("with_metadata"), "%s: the records already have a field %q, which with_metadata adds", ctx.Describe(), f.Name)
			return nil
		}
		fields = append(fields, f)
	}
	return schemas.New(fields...)
}

// appendMetadata appends the metadata of r to its decoded row. Header values are read as
// text; a header given twice keeps its last value.
func appendMetadata(row schemas.Row, r *kgo.Record) schemas.Row {
	var headers any
	if len(r.Headers) > 0 {
		h := make(map[string]any, len(r.Headers))
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		headers = h
	}
	var key any
	if r.Key != nil {
		key = r.Key
	}
	return append(row, key, r.Topic, int64(r.Partition), r.Offset, r.Timestamp.UTC(), headers)
}
