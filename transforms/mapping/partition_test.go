package mapping

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

var routed = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "kind", Type: typ(schemas.String), Nullable: true},
)

func routedRows() *schemas.Batch {
	return batch(routed,
		schemas.Row{int64(1), "a"}, schemas.Row{int64(2), "b"}, schemas.Row{int64(3), "zzz"},
		schemas.Row{int64(4), nil}, schemas.Row{int64(5), "a"})
}

func ids(rs []schemas.Row) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r[0].(int64))
	}
	return out
}

func TestPartition(t *testing.T) {
	tr, ctx := mustBuild(t, "Partition", "config:\n  by: kind\n  outputs: [a, b]\n  unknown_output: other", routed)
	var tags []string
	for _, o := range ctx.Outputs() {
		tags = append(tags, o.Tag)
		if o.Schema != routed {
			t.Errorf("output %s has schema %v", o.Tag, o.Schema)
		}
	}
	if strings.Join(tags, ",") != "a,b,other" {
		t.Errorf("outputs %v", tags)
	}
	out, err := run(t, tr, routedRows())
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string][]int64{"a": {1, 5}, "b": {2}, "other": {3, 4}} {
		if got := ids(out.Rows(tag)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", tag, got, want)
		}
	}
}

// Without unknown_output an unlisted value is an error for the record.
func TestPartitionUnknownValue(t *testing.T) {
	tr, _ := mustBuild(t, "Partition", "config:\n  by: \"kind ?? 'none'\"\n  outputs: [a, b]\n  error_handling: {output: errs}", routed)
	out, err := run(t, tr, routedRows())
	if err != nil {
		t.Fatal(err)
	}
	errs := out.Rows("errs")
	if len(errs) != 2 || errs[0][1] != `Partition 'step': by returned the string "zzz", which is not one of the outputs ["a" "b"] and there is no unknown_output` {
		t.Errorf("errors %v", errs)
	}

	tr, _ = mustBuild(t, "Partition", "config:\n  by: kind\n  outputs: [a, b]", routed)
	_, err = run(t, tr, routedRows())
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 102 {
		t.Errorf("error %v", err)
	}
}

func TestPartitionConfigErrors(t *testing.T) {
	tests := []struct{ config, want string }{
		{"config: {by: id, outputs: [a]}", `p.yaml:1:14: by must give the name of an output (a string), but "id" is an integer`},
		{"config: {by: kind, outputs: [a, a]}", `p.yaml:1:33: output "a" is listed twice`},
		{"config: {by: kind, outputs: [a, errs], error_handling: {output: errs}}", `p.yaml:1:33: output "errs" is also the error_handling output`},
		{"config: {by: knd, outputs: [a]}", `p.yaml:1:14: unknown field "knd" in the expression (did you mean "kind"?)`},
		{"config: {by: kind}", `p.yaml:1:9: Partition 'step' needs config key "outputs"`},
	}
	for _, tt := range tests {
		if got := buildError(t, "Partition", tt.config, routed); !strings.HasPrefix(got, tt.want) {
			t.Errorf("error\n got %s\nwant %s", got, tt.want)
		}
	}
}
