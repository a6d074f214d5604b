package window

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

var events = schemas.New(schemas.Field{Name: "value", Type: schemas.Type{Kind: schemas.Int64}})

// buildExtract builds ExtractWindowingInfo from a config snippet, as the runner would.
func buildExtract(t *testing.T, src string, in *schemas.Schema) (*Extract, error) {
	t.Helper()
	d, root := componenttest.Env{}.Parse(t, src)
	ctx := &component.Context{Decoder: d, Type: "ExtractWindowingInfo", Name: "ExtractWindowingInfo",
		Pos: d.At(root), Config: component.MappingValue(root, "config"),
		Inputs: []component.Input{{Name: "in", Schema: in}}}
	var cfg ExtractConfig
	var x *Extract
	if ctx.Config == nil || d.Decode(ctx.Config, &cfg, ctx.Describe()) {
		x, _ = BuildExtract(ctx, &cfg)
	}
	return x, d.Diags.Err()
}

// Beam's own example: values 1, 2, 11 with those timestamps in fixed windows of 10 s.
func TestExtractWindowingInfo(t *testing.T) {
	x, err := buildExtract(t, `config:
  fields:
    timestamp: timestamp
    window_start: window_start
    window_end: window_end
    window_string: window_string
    window_type: window_type
    pane_info_field: pane_info`, events)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Out.String(); got != "{value integer, timestamp timestamp, window_start timestamp?, window_end timestamp?, window_string string, window_type string, pane_info_field struct<is_first boolean, is_last boolean, timing string, index integer, nonspeculative_index integer>}" {
		t.Errorf("schema %s", got)
	}
	fn := Fixed(10*time.Second, 0)
	var strs []string
	for _, v := range []int64{1, 2, 11} {
		w := fn.Assign(v*sec, nil)[0]
		row := x.Row(schemas.Row{v}, v*sec, w, NoFiring)
		if row[1] != time.Unix(v, 0).UTC() || row[2] != w.StartTime() || row[3] != w.EndTime() || row[5] != "IntervalWindow" {
			t.Errorf("row %v", row)
		}
		pane := map[string]any{"is_first": true, "is_last": true, "timing": "UNKNOWN", "index": int64(0), "nonspeculative_index": int64(0)}
		if !reflect.DeepEqual(row[6], pane) {
			t.Errorf("pane %v", row[6])
		}
		strs = append(strs, row[4].(string))
	}
	if want := []string{"[0.0, 10.0)", "[0.0, 10.0)", "[10.0, 20.0)"}; !reflect.DeepEqual(strs, want) {
		t.Errorf("window strings %v, want %v", strs, want)
	}
}

func TestExtractWindowingInfoForms(t *testing.T) {
	x, err := buildExtract(t, "config: {fields: [timestamp, window_type]}", events)
	if err != nil {
		t.Fatal(err)
	}
	row := x.Row(schemas.Row{int64(1)}, sec, Global, NoFiring)
	if !reflect.DeepEqual(row, schemas.Row{int64(1), time.Unix(1, 0).UTC(), "GlobalWindow"}) {
		t.Errorf("list form: %v", row)
	}
	x, err = buildExtract(t, "type: ExtractWindowingInfo", events)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(x.Out.Names(), ","); got != "value,timestamp,window_start,window_end" {
		t.Errorf("default fields %s", got)
	}
	if row := x.Row(schemas.Row{int64(1)}, sec, Global, NoFiring); row[2] != nil || row[3] != nil {
		t.Errorf("global window has bounds: %v", row)
	}
}

func TestExtractWindowingInfoErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"config: {fields: [timestamp, window_strng]}", `p.yaml:1:30: unknown windowing property "window_strng" (did you mean "window_string"?)`},
		{"config: {fields: [window_object]}", "p.yaml:1:19: window_object is a Python or Java object, which sluice does not have\n\thint: use window_start"},
		{"config: {fields: [value]}", `p.yaml:1:19: unknown windowing property "value"`},
		{"config: {fields: {value: timestamp}}", `p.yaml:1:18: ExtractWindowingInfo would add field "value", which the input already has`},
		{"config: {fields: {a: timestamp, b: [x]}}", `p.yaml:1:36: a windowing property must be a name`},
		{"config: {fields: 3}", `p.yaml:1:18: fields must be a list of windowing properties`},
	}
	for _, tt := range tests {
		_, err := buildExtract(t, tt.src, events)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.src, err, tt.want)
		}
	}
}
