package window

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// ExtractConfig is the config of ExtractWindowingInfo.
type ExtractConfig struct {
	Fields yaml.Node `yaml:"fields" doc:"Windowing properties to add as fields: a list of property names, or a mapping of new field names to properties (timestamp, window_start, window_end, window_string, window_type, pane_info). Default: [timestamp, window_start, window_end]."`
}

// Pane describes which firing of a window a record comes from, as Beam's PaneInfo.
type Pane struct {
	IsFirst, IsLast     bool
	Timing              string // EARLY, ON_TIME, LATE or UNKNOWN
	Index, NonSpecIndex int64
}

// The panes sluice produces: records that went through no grouping, and a window's one
// firing when the watermark passes its end.
var (
	NoFiring = Pane{IsFirst: true, IsLast: true, Timing: "UNKNOWN"}
	OnTime   = Pane{IsFirst: true, IsLast: true, Timing: "ON_TIME"}
)

// PaneType is the type of the pane_info field.
var PaneType = schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
	{Name: "is_first", Type: schemas.Type{Kind: schemas.Bool}},
	{Name: "is_last", Type: schemas.Type{Kind: schemas.Bool}},
	{Name: "timing", Type: schemas.Type{Kind: schemas.String}},
	{Name: "index", Type: schemas.Type{Kind: schemas.Int64}},
	{Name: "nonspeculative_index", Type: schemas.Type{Kind: schemas.Int64}},
}}

// property is one windowing property ExtractWindowingInfo can add.
type property struct {
	typ      schemas.Type
	nullable bool
	value    func(ts int64, w Window, p Pane) any
}

var (
	tsType  = schemas.Type{Kind: schemas.Timestamp}
	strType = schemas.Type{Kind: schemas.String}
)

var properties = map[string]property{
	"timestamp": {tsType, false, func(ts int64, _ Window, _ Pane) any { return time.Unix(0, ts).UTC() }},
	"window_start": {tsType, true, func(_ int64, w Window, _ Pane) any {
		if w.IsGlobal() {
			return nil
		}
		return w.StartTime()
	}},
	"window_end": {tsType, true, func(_ int64, w Window, _ Pane) any {
		if w.IsGlobal() {
			return nil
		}
		return w.EndTime()
	}},
	"window_string": {strType, false, func(_ int64, w Window, _ Pane) any { return w.String() }},
	"window_type":   {strType, false, func(_ int64, w Window, _ Pane) any { return w.Type() }},
	"pane_info": {PaneType, false, func(_ int64, _ Window, p Pane) any {
		return map[string]any{"is_first": p.IsFirst, "is_last": p.IsLast, "timing": p.Timing,
			"index": p.Index, "nonspeculative_index": p.NonSpecIndex}
	}},
}

var defaultProperties = []string{"timestamp", "window_start", "window_end"}

// Extract is a built ExtractWindowingInfo: it appends windowing properties to rows.
type Extract struct {
	// Out is the output schema: the input fields, then the added ones.
	Out   *schemas.Schema
	props []property
}

// BuildExtract checks an ExtractWindowingInfo config against the input schema. It has the
// signature of a component build function; problems are reported through ctx.
func BuildExtract(ctx *component.Context, cfg *ExtractConfig) (*Extract, error) {
	in := ctx.Input()
	names, props, ok := extractFields(ctx, &cfg.Fields)
	if !ok || in == nil {
		return nil, nil
	}
	x := &Extract{props: props}
	fields := slices.Clone(in.Fields)
	for i, name := range names {
		if _, dup := in.Field(name); dup {
			ctx.Errorf(ctx.KeyPos("fields"), "ExtractWindowingInfo would add field %q, which the input already has", name).
				Detail = "name the new field differently with the mapping form: fields: {event_" + name + ": " + name + "}"
			return nil, nil
		}
		fields = append(fields, schemas.Field{Name: name, Type: props[i].typ, Nullable: props[i].nullable})
	}
	x.Out = schemas.New(fields...)
	ctx.Output(component.Main, x.Out)
	return x, nil
}

// extractFields reads the fields key: absent, a list of properties, or a mapping of field
// names to properties.
func extractFields(ctx *component.Context, n *yaml.Node) (names []string, props []property, ok bool) {
	type entry struct {
		name string
		prop *yaml.Node
	}
	var entries []entry
	switch n.Kind {
	case 0:
		for _, p := range defaultProperties {
			entries = append(entries, entry{p, &yaml.Node{Kind: yaml.ScalarNode, Value: p}})
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			entries = append(entries, entry{c.Value, c})
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			entries = append(entries, entry{n.Content[i].Value, n.Content[i+1]})
		}
	default:
		ctx.Errorf(ctx.At(n), "fields must be a list of windowing properties or a mapping of field names to them")
		return nil, nil, false
	}
	ok = true
	seen := map[string]bool{}
	for _, e := range entries {
		p, known := properties[e.prop.Value]
		switch {
		case e.prop.Kind != yaml.ScalarNode:
			ctx.Errorf(ctx.At(e.prop), "a windowing property must be a name such as window_start")
		case e.prop.Value == "window_object":
			ctx.Errorf(ctx.At(e.prop), "window_object is a Python or Java object, which sluice does not have").
				Detail = "use window_start and window_end, or window_string"
		case !known:
			ctx.Errorf(ctx.At(e.prop), "unknown windowing property %q%s", e.prop.Value, diag.DidYouMean(e.prop.Value, propertyNames()))
		case seen[e.name]:
			ctx.Errorf(ctx.At(e.prop), "field %q is listed twice", e.name)
		default:
			seen[e.name] = true
			names, props = append(names, e.name), append(props, p)
			continue
		}
		ok = false
	}
	return names, props, ok
}

func propertyNames() []string {
	names := make([]string, 0, len(properties)+1)
	for n := range properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Row returns in with the windowing properties of a record of event time ts (Unix ns) in
// window w and pane p appended. A record in several windows (sliding) gets one row per
// window, as Beam explodes it.
func (x *Extract) Row(in schemas.Row, ts int64, w Window, p Pane) schemas.Row {
	out := make(schemas.Row, len(in), len(in)+len(x.props))
	copy(out, in)
	for _, prop := range x.props {
		out = append(out, prop.value(ts, w, p))
	}
	return out
}
