package runner

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
)

func shape() *component.SpecShape {
	return &component.SpecShape{
		Sources:  map[string][]string{"in": {"kafka topic a", "kafka group g"}},
		Sinks:    map[string][]string{"out": {"iceberg table db.t"}},
		Feeds:    map[string][]string{"out": {"in"}},
		Stateful: map[string][]string{"count": {"config {\"key\":\"k\"}", "windowing {\"size\":\"60s\",\"type\":\"fixed\"}"}},
	}
}

func TestCompareShapes(t *testing.T) {
	for _, c := range []struct {
		name       string
		change     func(*component.SpecShape)
		state      bool
		incompat   string // a change that must be refused, "" for none
		compatible string // a change that must be allowed, "" for none
	}{
		{name: "unchanged", change: func(*component.SpecShape) {}},
		{name: "topic replaced", change: func(s *component.SpecShape) { s.Sources["in"][0] = "kafka topic b" },
			incompat: "sink out read kafka group g, kafka topic a and now reads kafka group g, kafka topic b"},
		{name: "group changed", change: func(s *component.SpecShape) { s.Sources["in"][1] = "kafka group h" },
			incompat: "now reads kafka group h"},
		{name: "topic added", change: func(s *component.SpecShape) { s.Sources["in"] = append(s.Sources["in"], "kafka topic c") },
			compatible: "sink out also reads kafka topic c"},
		{name: "source renamed, same topics", change: func(s *component.SpecShape) {
			s.Sources = map[string][]string{"events": s.Sources["in"]}
			s.Feeds["out"] = []string{"events"}
		}},
		{name: "table changed", change: func(s *component.SpecShape) { s.Sinks["out"] = []string{"iceberg table db.u"} },
			incompat: "sink out wrote iceberg table db.t and now writes iceberg table db.u"},
		{name: "window changed with state", state: true, change: func(s *component.SpecShape) { s.Stateful["count"][1] = "windowing {}" },
			incompat: "count changed its key, aggregation or windowing while it holds window state"},
		{name: "window changed without state", change: func(s *component.SpecShape) { s.Stateful["count"][1] = "windowing {}" },
			compatible: "count changed (it held no state)"},
		{name: "stateful removed with state", state: true, change: func(s *component.SpecShape) { delete(s.Stateful, "count") },
			incompat: "count held window state and is gone"},
		{name: "sink renamed and its topic replaced", change: func(s *component.SpecShape) {
			s.Sinks = map[string][]string{"table": s.Sinks["out"]}
			s.Feeds = map[string][]string{"table": {"in"}}
			s.Sources["in"][0] = "kafka topic b"
		}, incompat: "sink out read kafka group g, kafka topic a and now reads kafka group g, kafka topic b"},
		{name: "sink renamed", change: func(s *component.SpecShape) {
			s.Sinks = map[string][]string{"table": s.Sinks["out"]}
			s.Feeds = map[string][]string{"table": {"in"}}
		}, compatible: "sink out is now named table"},
		{name: "stateful added", change: func(s *component.SpecShape) { s.Stateful["sum"] = []string{"config {}"} },
			compatible: "sum is new"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := shape()
			c.change(cur)
			var refused, allowed []string
			for _, ch := range CompareShapes(shape(), cur, c.state) {
				if ch.Compatible {
					allowed = append(allowed, ch.What)
				} else {
					refused = append(refused, ch.What)
				}
			}
			if (c.incompat == "") != (len(refused) == 0) || c.incompat != "" && !strings.Contains(strings.Join(refused, "\n"), c.incompat) {
				t.Errorf("refused %q, want %q", refused, c.incompat)
			}
			if c.compatible != "" && !strings.Contains(strings.Join(allowed, "\n"), c.compatible) {
				t.Errorf("allowed %q, want %q", allowed, c.compatible)
			}
		})
	}
}

func TestShapeOf(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`pipeline:
  type: chain
  transforms:
    - type: Create
      config:
        elements: [{k: a, v: 1}]
    - type: GroupByKey
      windowing: {type: fixed, size: 1m}
      config: {key: k, values: v}
    - type: WriteToJson
      config:
        path: out/x
`))
	if err != nil {
		t.Fatal(err)
	}
	sh := ShapeOf(p)
	if got := sh.Sinks["WriteToJson"]; len(got) != 1 || got[0] != "files out/x" {
		t.Errorf("sink identity %q", got)
	}
	if got := sh.Feeds["WriteToJson"]; len(got) != 1 || got[0] != "Create" {
		t.Errorf("feeds %q", got)
	}
	if got := sh.Stateful["GroupByKey"]; len(got) != 2 || !strings.Contains(got[0], `"key":"k"`) || !strings.Contains(got[1], `"Size":60000000000`) {
		t.Errorf("stateful identity %q, want the key and a window of 1m as 60 s", got)
	}
}
