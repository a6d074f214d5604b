package mapping

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// StripErrorMetadata gives back the records a Filter failed on, with their fields, positions
// and times, whichever of Beam's error shapes it reads.
func TestStripErrorMetadata(t *testing.T) {
	tr, ctx := mustBuild(t, "Filter", "config:\n  keep: flag\n  error_handling: {output: bad}", loose)
	in := batch(loose, schemas.Row{int64(1), true}, schemas.Row{int64(2), "yes"}, schemas.Row{int64(3), nil})
	out, err := run(t, tr, in)
	if err != nil {
		t.Fatal(err)
	}
	errSchema := outputSchema(t, ctx, "bad")
	st, sctx := mustBuild(t, "StripErrorMetadata", "config: {}", errSchema)
	if got := outputSchema(t, sctx, component.Main).String(); got != "{id integer?, flag any?}" {
		t.Errorf("output schema %s, want the failed records' fields", got)
	}
	stripped, err := run(t, st, out["bad"]...)
	if err != nil {
		t.Fatal(err)
	}
	want := []schemas.Row{{int64(2), "yes"}, {int64(3), nil}}
	if got := stripped.Rows(component.Main); !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if b := stripped[component.Main][0]; b.Pos[0].Offset != 101 || !b.Time[0].Equal(in.Time[1]) {
		t.Errorf("position %v time %v, want those of the failed record", b.Pos[0], b.Time[0])
	}

	// An IO error row of an undecodable payload: the payload, as a row of one field.
	raw := schemas.New(schemas.Field{Name: "failed_row", Type: typ(schemas.Bytes), Nullable: true},
		schemas.Field{Name: "error_message", Type: typ(schemas.String)})
	st, sctx = mustBuild(t, "StripErrorMetadata", "config: {}", raw)
	if got := outputSchema(t, sctx, component.Main).String(); got != "{element bytes?}" {
		t.Errorf("output schema %s", got)
	}
	stripped, err = run(t, st, batch(raw, schemas.Row{[]byte("{oops"), "bad JSON"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := stripped.Rows(component.Main); len(got) != 1 || string(got[0][0].([]byte)) != "{oops" {
		t.Errorf("rows %v", got)
	}
}

func TestStripErrorMetadataNeedsErrorRows(t *testing.T) {
	got := buildError(t, "StripErrorMetadata", "config: {}", orders)
	if !strings.Contains(got, "StripErrorMetadata 'step' reads error rows, but its input has no field failed_row, element, record") {
		t.Errorf("error %s", got)
	}
}
