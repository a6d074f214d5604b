package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/component"
)

// Text renders the diff for people and golden files: the sections that have changes, then
// the verdict; with quiet, the verdict only.
func (d *Diff) Text(quiet bool) string {
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) > 0 {
			fmt.Fprintf(&b, "%s:\n%s\n", title, strings.Join(lines, ""))
		}
	}
	if !quiet {
		if d.Empty() {
			b.WriteString("no differences\n\n")
		}
		section("transforms", d.transformLines())
		section("schemas", d.schemaLines())
		section("sources and sinks", d.ioLines())
		var opts []string
		for _, o := range d.Options {
			line := fmt.Sprintf("  ~ %s: %s -> %s", o.Option, o.Old, o.New)
			if o.Note != "" {
				line += ": " + o.Note
			}
			opts = append(opts, line+"\n")
		}
		section("options", opts)
	}
	v := d.Verdict
	switch {
	case !v.Compatible && v.NewPipeline:
		b.WriteString("verdict: incompatible: the new spec is a new pipeline (options.name changed) that cannot start where the old one wrote\n")
	case !v.Compatible:
		b.WriteString("verdict: incompatible: the new spec cannot resume from the old one's checkpoints\n")
	case v.NewPipeline:
		b.WriteString("verdict: compatible: a new pipeline (options.name changed), which starts afresh: no offsets or window state of the old one carry over, and its sources start at their default positions\n")
	case len(v.Changes) == 0:
		b.WriteString("verdict: compatible: nothing a checkpoint depends on changed\n")
	default:
		b.WriteString("verdict: compatible: the new spec resumes from the old one's checkpoints\n")
	}
	for _, c := range v.Changes {
		what := "compatible"
		if !c.Compatible {
			what = "incompatible"
		}
		fmt.Fprintf(&b, "  %s: %s\n", what, c.What)
	}
	if len(v.WaysOut) > 0 {
		b.WriteString("ways out:\n")
		for _, w := range v.WaysOut {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	return b.String()
}

func (d *Diff) transformLines() []string {
	var out []string
	for _, t := range d.Transforms {
		switch t.Change {
		case "added", "removed":
			sign, line := map[string]string{"added": "+", "removed": "-"}[t.Change], t.label
			if len(t.Inputs) > 0 {
				line += " (input: " + strings.Join(t.Inputs, ", ") + ")"
			}
			out = append(out, "  "+sign+" "+line+"\n")
			continue
		case "renamed":
			out = append(out, "  ~ "+t.label+", renamed from "+t.OldName+"\n")
		default:
			out = append(out, "  ~ "+t.label+"\n")
		}
		for _, c := range t.Changes {
			plain := c.Key == "type" || c.Key == "input"
			out = append(out, fmt.Sprintf("      %s: %s -> %s\n", c.Key, shortValue(c.Old, plain), shortValue(c.New, plain)))
		}
	}
	return out
}

// shortValue is a changed value on one line: compact JSON, cut after 80 characters; plain
// shows a string without quotes.
func shortValue(v json.RawMessage, plain bool) string {
	if len(v) == 0 {
		return "(none)"
	}
	s := string(v)
	var str string
	if plain && json.Unmarshal(v, &str) == nil {
		if s = str; s == "" {
			return "(none)"
		}
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}

func (d *Diff) schemaLines() []string {
	var out []string
	for _, s := range d.Schemas {
		name := s.Transform
		if s.Output != component.Main {
			name += "." + s.Output
		}
		switch s.Change {
		case "added":
			out = append(out, fmt.Sprintf("  %s: + output %s\n", name, s.New))
		case "removed":
			out = append(out, fmt.Sprintf("  %s: - output %s\n", name, s.Old))
		}
		for _, f := range s.Fields {
			switch {
			case f.Old == "":
				out = append(out, fmt.Sprintf("  %s: + %s %s\n", name, f.Field, f.New))
			case f.New == "":
				out = append(out, fmt.Sprintf("  %s: - %s %s\n", name, f.Field, f.Old))
			default:
				out = append(out, fmt.Sprintf("  %s: ~ %s %s -> %s\n", name, f.Field, f.Old, f.New))
			}
		}
	}
	return out
}

func (d *Diff) ioLines() []string {
	var out []string
	for _, c := range d.IO {
		switch c.Change {
		case "added":
			line := fmt.Sprintf("  + %s %s: %s", c.Kind, c.Name, list(c.Added))
			if c.Kind == "sink" {
				line += ", fed by " + list(c.NewFeeds)
			}
			out = append(out, line+"\n")
			continue
		case "removed":
			out = append(out, fmt.Sprintf("  - %s %s: %s\n", c.Kind, c.Name, list(c.Removed)))
			continue
		}
		line := fmt.Sprintf("  ~ %s %s", c.Kind, c.Name)
		if c.OldName != "" {
			line += ", renamed from " + c.OldName
		}
		var parts []string
		for _, f := range c.Removed {
			parts = append(parts, "- "+f)
		}
		for _, f := range c.Added {
			parts = append(parts, "+ "+f)
		}
		if c.OldFeeds != nil || c.NewFeeds != nil {
			parts = append(parts, fmt.Sprintf("fed by %s (was %s)", list(c.NewFeeds), list(c.OldFeeds)))
		}
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, ", ")
		}
		out = append(out, line+"\n")
	}
	return out
}
