package component_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"gopkg.in/yaml.v3"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"500ms": 500 * time.Millisecond, "10s": 10 * time.Second, "1.5m": 90 * time.Second,
		"2h": 2 * time.Hour, "1d": 24 * time.Hour, "30": 30 * time.Second, "0.25": 250 * time.Millisecond,
	}
	for in, want := range good {
		if got, err := component.ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10 minutes", "-1s", "s", "1w", "abc"} {
		if _, err := component.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted a bad duration", in)
		}
	}
}

type sample struct {
	Format  string             `yaml:"format" enum:"RAW,JSON"`
	Count   int                `yaml:"count" required:"true"`
	Every   component.Duration `yaml:"every"`
	Tags    []string           `yaml:"tags"`
	Props   map[string]string  `yaml:"props"`
	Nested  *struct{ A bool }  `yaml:"nested"`
	Renamed string             `yaml:"consumer_config" alias:"consumer_config_updates"`
}

func decode(t *testing.T, src string) (sample, []string) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	d := &component.Decoder{File: "c.yaml", Lines: strings.Split(src, "\n"), Diags: &diags}
	var s sample
	d.Decode(n.Content[0], &s, "Sample")
	var msgs []string
	for _, x := range diags {
		msgs = append(msgs, strings.TrimPrefix(x.Error(), "c.yaml:"))
	}
	return s, msgs
}

func TestDecodeValues(t *testing.T) {
	s, msgs := decode(t, "format: json\ncount: 3\nevery: 2s\ntags: one\nprops: {a: 1, b: x}\nconsumer_config_updates: z\n")
	if len(msgs) > 0 {
		t.Fatal(msgs)
	}
	if s.Format != "JSON" || s.Count != 3 || time.Duration(s.Every) != 2*time.Second ||
		len(s.Tags) != 1 || s.Tags[0] != "one" || s.Props["a"] != "1" || s.Renamed != "z" {
		t.Errorf("decoded %+v", s)
	}
}

func TestDecodeProblemsAllAtOnce(t *testing.T) {
	_, msgs := decode(t, "format: xml\ncont: 3\nevery: soon\ntags: {a: 1}\n")
	want := []string{
		`1:9: "format" must be one of RAW, JSON, not "xml"`,
		`2:1: unknown key "cont" in Sample (did you mean "count"?)` + "\n\thint: known keys: consumer_config, count, every, format, nested, props, tags",
		`3:8: "every": "soon" is not a duration: write a number with a unit (ms, s, m, h, d), e.g. 10s or 1.5m`,
		`4:7: "tags" must be a list, not a mapping`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestExprPositions(t *testing.T) {
	src := "a: x + 1\nb: \"y * 2\"\nc: |\n  first\n    + second\n"
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	var diags diag.List
	d := &component.Decoder{File: "e.yaml", Lines: strings.Split(src, "\n"), Diags: &diags}
	var cfg struct {
		A component.Expr `yaml:"a"`
		B component.Expr `yaml:"b"`
		C component.Expr `yaml:"c"`
	}
	d.Decode(n.Content[0], &cfg, "E")
	for _, c := range []struct {
		e         component.Expr
		line, col int
		want      string
	}{
		{cfg.A, 1, 5, "e.yaml:1:8"}, // the "1" of x + 1
		{cfg.B, 1, 5, "e.yaml:2:9"}, // the "2" inside the quotes
		{cfg.C, 2, 5, "e.yaml:5:7"}, // "second" on the block's second line
		{cfg.C, 1, 1, "e.yaml:4:3"}, // the block's first character
	} {
		if got := c.e.At(c.line, c.col).String(); got != c.want {
			t.Errorf("%q at %d:%d = %s, want %s", c.e.Text, c.line, c.col, got, c.want)
		}
	}
}
