package kafka

import (
	"slices"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// With follow_schema_updates the reader's schema grows while the pipeline runs, when a newer
// writer's schema of the subject adds fields (formats.Reading.Current): the rows gain them at
// their end, after the metadata fields of with_metadata, so that every field the stages after
// the source were built for stays where it was. A batch's Schema is the grown one; its rows
// decoded with an older reader are padded with nulls to it.

// grownSchema is the source's rows' schema for a grown format schema.
type grownSchema struct {
	format, out *schemas.Schema
}

// grownOut returns the rows' schema now: out with the fields the format's schema gained.
func (s *source) grownOut() *schemas.Schema {
	cur, base := s.format.Current(), len(s.format.Schema.Fields)
	if len(cur.Fields) == base {
		return s.out
	}
	if g := s.grown.Load(); g != nil && g.format == cur {
		return g.out
	}
	out := schemas.New(append(slices.Clone(s.out.Fields), cur.Fields[base:]...)...)
	s.grown.Store(&grownSchema{format: cur, out: out})
	return out
}

// withMetadata appends the record's metadata to its decoded row, before the fields the
// reader's schema gained.
func (s *source) withMetadata(row schemas.Row, r *kgo.Record) schemas.Row {
	base := len(s.format.Schema.Fields)
	if len(row) == base {
		return appendMetadata(row, r)
	}
	return append(appendMetadata(row[:base:base], r), row[base:]...)
}

// growing wraps emit so that the decoded batches carry the grown schema, their narrower rows
// padded with nulls.
func (s *source) growing(emit component.Emit) component.Emit {
	return func(tag string, b *schemas.Batch) error {
		if tag != component.Main {
			return emit(tag, b)
		}
		out := s.grownOut() // after decoding: no row of b is wider
		if out != s.out {
			b.Schema = out
			for i, row := range b.Rows {
				if len(row) < len(out.Fields) {
					b.Rows[i] = append(row[:len(row):len(row)], make(schemas.Row, len(out.Fields)-len(row))...)
				}
			}
		}
		return emit(tag, b)
	}
}
