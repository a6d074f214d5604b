// Package window holds Beam's windowing: the windowing spec, the assignment of records to
// windows by event time, the watermark Tracker that decides when a window is complete, and
// ExtractWindowingInfo. It does no I/O; the runner drives it (docs/windows.md).
package window

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/component"
	"gopkg.in/yaml.v3"
)

// Spec is a windowing spec, as Beam YAML's `windowing:` key and WindowInto take it.
type Spec struct {
	Type            string             `yaml:"type" required:"true" enum:"global,fixed,sliding,sessions" doc:"Kind of window."`
	Size            component.Duration `yaml:"size" doc:"Window length (fixed, sliding)."`
	Period          component.Duration `yaml:"period" doc:"How often a sliding window starts."`
	Offset          component.Duration `yaml:"offset" doc:"Shift of window boundaries from the epoch (fixed, sliding)."`
	Gap             component.Duration `yaml:"gap" doc:"Inactivity that closes a session (sessions)."`
	AllowedLateness component.Duration `yaml:"allowed_lateness" doc:"sluice adds: how far behind the watermark a record may arrive and still count."`
}

// WindowType is s's kind of window (component.Windowing).
func (s *Spec) WindowType() string { return s.Type }

// Decode reads a windowing spec from n, reporting problems to d with positions. It returns
// nil when the spec is invalid.
func Decode(d *component.Decoder, n *yaml.Node) *Spec {
	var s Spec
	if !d.Decode(n, &s, "windowing") {
		return nil
	}
	need := func(key string, v component.Duration) bool {
		if component.MappingValue(n, key) == nil {
			d.Errorf(d.At(n), "%s windowing needs %q", s.Type, key)
			return false
		}
		if time.Duration(v) <= 0 {
			d.Errorf(d.At(component.MappingValue(n, key)), "windowing %q must be longer than zero", key)
			return false
		}
		return true
	}
	allowed := map[string][]string{
		"global":   {"allowed_lateness"},
		"fixed":    {"size", "offset", "allowed_lateness"},
		"sliding":  {"size", "period", "offset", "allowed_lateness"},
		"sessions": {"gap", "allowed_lateness"},
	}[s.Type]
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "type" || slices.Contains(allowed, k) {
			continue
		}
		d.Errorf(d.At(n.Content[i]), "%q does not apply to %s windowing", k, s.Type)
		ok = false
	}
	switch s.Type {
	case "fixed":
		ok = need("size", s.Size) && ok
	case "sliding":
		ok = need("size", s.Size) && need("period", s.Period) && ok
		if ok && s.Period > s.Size {
			d.Errorf(d.At(component.MappingValue(n, "period")), "sliding windowing period (%s) is longer than its size (%s): records between windows would be lost",
				time.Duration(s.Period), time.Duration(s.Size))
			ok = false
		}
	case "sessions":
		ok = need("gap", s.Gap) && ok
	}
	if !ok {
		return nil
	}
	return &s
}
