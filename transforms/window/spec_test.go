package window

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

func decode(t *testing.T, src string) (*Spec, string) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	s := Decode(&component.Decoder{File: "w.yaml", Diags: &diags}, n.Content[0])
	if err := diags.Err(); err != nil {
		return s, err.Error()
	}
	return s, ""
}

func TestValidSpecs(t *testing.T) {
	cases := map[string]Spec{
		"{type: global}":                                   {Type: "global"},
		"{type: fixed, size: 60}":                          {Type: "fixed", Size: component.Duration(time.Minute)},
		"{type: FIXED, size: 10s, offset: 2s}":             {Type: "fixed", Size: component.Duration(10 * time.Second), Offset: component.Duration(2 * time.Second)},
		"{type: sliding, size: 1m, period: 10s}":           {Type: "sliding", Size: component.Duration(time.Minute), Period: component.Duration(10 * time.Second)},
		"{type: sessions, gap: 10s, allowed_lateness: 1h}": {Type: "sessions", Gap: component.Duration(10 * time.Second), AllowedLateness: component.Duration(time.Hour)},
	}
	for src, want := range cases {
		got, msg := decode(t, src)
		if msg != "" || got == nil || *got != want {
			t.Errorf("%s: got %+v, %q; want %+v", src, got, msg, want)
		}
	}
}

func TestInvalidSpecs(t *testing.T) {
	cases := map[string]string{
		"{type: fixed}":                        `w.yaml:1:1: fixed windowing needs "size"`,
		"{type: fixed, size: 0s}":              `w.yaml:1:21: windowing "size" must be longer than zero`,
		"{type: fixed, size: 10s, gap: 5s}":    `w.yaml:1:26: "gap" does not apply to fixed windowing`,
		"{type: sliding, size: 10s}":           `w.yaml:1:1: sliding windowing needs "period"`,
		"{type: sessions, gap: 10s, size: 1m}": `w.yaml:1:28: "size" does not apply to sessions windowing`,
		"{size: 10s}":                          `w.yaml:1:1: windowing needs key "type"`,
	}
	for src, want := range cases {
		got, msg := decode(t, src)
		if got != nil || !strings.HasPrefix(msg, want) {
			t.Errorf("%s: got %+v, %q; want %q", src, got, msg, want)
		}
	}
}
