package bigquery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/sluicehq/sluice/schemas"
)

// The source position columns (source_position_columns: true): every row also carries where
// it was read. A commit interrupted by a crash so long ago that BigQuery no longer knows its
// streams is then decided by counting its rows in the table (recover.go), and at_least_once
// readers can drop the duplicates of a replay by them.
const (
	colSource    = "sluice_source"    // the source of the row's position, e.g. kafka:orders
	colPartition = "sluice_partition" // its partition
	colOffset    = "sluice_offset"    // its offset
)

// withPositions returns the schema of the rows as the table holds them: in with the source
// position columns after its fields.
func withPositions(in *schemas.Schema) *schemas.Schema {
	out := &schemas.Schema{Fields: append(in.Fields[:len(in.Fields):len(in.Fields)],
		schemas.Field{Name: colSource, Type: schemas.Type{Kind: schemas.String}, Nullable: true},
		schemas.Field{Name: colPartition, Type: schemas.Type{Kind: schemas.Int64}, Nullable: true},
		schemas.Field{Name: colOffset, Type: schemas.Type{Kind: schemas.Int64}, Nullable: true})}
	return out
}

// appendPosition returns row followed by the position's columns, in scratch's memory.
func appendPosition(scratch, row schemas.Row, pos schemas.Position) schemas.Row {
	return append(append(scratch[:0], row...), pos.Source, int64(pos.Partition), pos.Offset)
}

// offsetRange is the offsets [from, next) of one source partition.
type offsetRange struct {
	source    string
	partition int32
	from      int64
	next      int64
}

// intentRanges returns the offsets the rows of an intent's commit were read from: for every
// partition it wrote, from its first row up to its next offset. Earlier commits hold only
// rows before the first, so the table's rows in the ranges are this commit's.
func intentRanges(in *intent) []offsetRange {
	var out []offsetRange
	for src, parts := range in.Written {
		for p, first := range parts {
			if next, ok := in.Next.Get(src, p); ok && next > first {
				out = append(out, offsetRange{source: src, partition: p, from: first, next: next})
			}
		}
	}
	return out
}

// countRows counts the rows of the table whose source positions fall in ranges, with a query.
func (s *sink) countRows(ctx context.Context, ranges []offsetRange) (int64, error) {
	conds := make([]string, len(ranges))
	var params []bigquery.QueryParameter
	for i, r := range ranges {
		conds[i] = fmt.Sprintf("(%[1]s = @s%[4]d AND %[2]s = @p%[4]d AND %[3]s >= @f%[4]d AND %[3]s < @n%[4]d)", colSource, colPartition, colOffset, i)
		params = append(params,
			bigquery.QueryParameter{Name: fmt.Sprintf("s%d", i), Value: r.source},
			bigquery.QueryParameter{Name: fmt.Sprintf("p%d", i), Value: int64(r.partition)},
			bigquery.QueryParameter{Name: fmt.Sprintf("f%d", i), Value: r.from},
			bigquery.QueryParameter{Name: fmt.Sprintf("n%d", i), Value: r.next})
	}
	q := s.bq.Query(fmt.Sprintf("SELECT COUNT(*) FROM `%s` WHERE %s", s.p.ref, strings.Join(conds, " OR ")))
	q.Parameters = params
	it, err := q.Read(ctx)
	if err != nil {
		return 0, err
	}
	var row []bigquery.Value
	if err := it.Next(&row); err != nil {
		if errors.Is(err, iterator.Done) {
			err = errors.New("the count query returned no row")
		}
		return 0, err
	}
	if len(row) != 1 {
		return 0, fmt.Errorf("the count query returned %v", row)
	}
	n, ok := row[0].(int64)
	if !ok {
		return 0, fmt.Errorf("the count query returned %v", row)
	}
	return n, nil
}
