package iceberg

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
)

// partitionField is one parsed entry of partition_fields.
type partitionField struct {
	column    string
	transform iceberg.Transform
	name      string // the partition field's name, as Iceberg's Java API names it
}

var (
	callRe = regexp.MustCompile(`^\s*([A-Za-z_]+)\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$`)
	bareRe = regexp.MustCompile(`^\s*([^\s(),]+)\s*$`)
)

// parsePartitionField parses Beam's syntax: "col" (identity), "year(col)", "month(col)",
// "day(col)", "hour(col)", "bucket(col, N)", "truncate(col, W)", "void(col)".
func parsePartitionField(s string) (partitionField, error) {
	if m := bareRe.FindStringSubmatch(s); m != nil {
		return partitionField{column: m[1], transform: iceberg.IdentityTransform{}, name: m[1]}, nil
	}
	m := callRe.FindStringSubmatch(s)
	if m == nil {
		return partitionField{}, fmt.Errorf("partition field %q: want a column name or a transform such as day(ts), bucket(id, 16) or truncate(name, 4)", s)
	}
	fn, col, arg := strings.ToLower(m[1]), m[2], m[3]
	withArg := fn == "bucket" || fn == "truncate"
	switch {
	case withArg && arg == "":
		return partitionField{}, fmt.Errorf("partition field %q: %s takes a column and a number, as %s(%s, 16)", s, fn, fn, col)
	case !withArg && arg != "":
		return partitionField{}, fmt.Errorf("partition field %q: %s takes only a column", s, fn)
	}
	var n int
	if withArg {
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n <= 0 {
			return partitionField{}, fmt.Errorf("partition field %q: %s needs a positive whole number, not %q", s, fn, arg)
		}
	}
	f := partitionField{column: col}
	switch fn {
	case "year", "years":
		f.transform, f.name = iceberg.YearTransform{}, col+"_year"
	case "month", "months":
		f.transform, f.name = iceberg.MonthTransform{}, col+"_month"
	case "day", "days":
		f.transform, f.name = iceberg.DayTransform{}, col+"_day"
	case "hour", "hours":
		f.transform, f.name = iceberg.HourTransform{}, col+"_hour"
	case "bucket":
		f.transform, f.name = iceberg.BucketTransform{NumBuckets: n}, col+"_bucket"
	case "truncate":
		f.transform, f.name = iceberg.TruncateTransform{Width: n}, col+"_trunc"
	case "void":
		f.transform, f.name = iceberg.VoidTransform{}, col+"_null"
	case "identity":
		f.transform, f.name = iceberg.IdentityTransform{}, col
	default:
		return partitionField{}, fmt.Errorf("partition field %q: unknown transform %q (year, month, day, hour, bucket, truncate, identity, void)", s, m[1])
	}
	return f, nil
}

// bind checks f against the table schema sc and returns the option that adds it to a spec.
func (f partitionField) bind(sc *iceberg.Schema) (iceberg.PartitionOption, error) {
	col, ok := sc.FindFieldByName(f.column)
	if !ok {
		return nil, fmt.Errorf("partition field %s: no column %q in the rows written (columns: %s)", f.name, f.column, strings.Join(topNames(sc), ", "))
	}
	if !f.transform.CanTransform(col.Type) {
		return nil, fmt.Errorf("partition field %s: %s cannot apply to column %q of type %s", f.name, f.transform, f.column, col.Type)
	}
	return iceberg.AddPartitionFieldBySourceID(col.ID, f.name, f.transform, sc, nil), nil
}

func topNames(sc *iceberg.Schema) []string {
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// partitionSpec builds the spec of a new table of schema sc from parsed fields.
func partitionSpec(fields []partitionField, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	if len(fields) == 0 {
		return *iceberg.UnpartitionedSpec, nil
	}
	opts := make([]iceberg.PartitionOption, 0, len(fields))
	for _, f := range fields {
		opt, err := f.bind(sc)
		if err != nil {
			return iceberg.PartitionSpec{}, err
		}
		opts = append(opts, opt)
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("partition_fields: %w", err)
	}
	return spec, nil
}
