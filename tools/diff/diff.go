package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/schemas"
)

// Diff is the semantic difference between two versions of a pipeline and whether the new one
// can resume from the old one's checkpoints (docs/upgrades.md, "sluice diff"). Every list is
// in a stable order: the new plan's transforms in order, then what only the old one has.
type Diff struct {
	Old     string `json:"old"`
	New     string `json:"new"`
	OldSpec string `json:"old_spec"`
	NewSpec string `json:"new_spec"`
	// Transforms are the transforms added, removed, renamed or changed, matched by name.
	Transforms []TransformDiff `json:"transforms"`
	// Schemas are the outputs of transforms in both plans whose schema changed.
	Schemas []SchemaDiff `json:"schemas"`
	// IO is the change of every source's and sink's identity (ShapeOf) and of what feeds a sink.
	IO []IODiff `json:"sources_and_sinks"`
	// Options are the runner options that changed.
	Options []OptionDiff `json:"options"`
	Verdict Verdict      `json:"verdict"`
}

// TransformDiff is one transform added, removed, renamed or changed.
type TransformDiff struct {
	Change  string `json:"change"` // "added", "removed", "renamed" or "changed"
	Name    string `json:"name"`
	Type    string `json:"type"`
	OldName string `json:"old_name,omitempty"`
	// Inputs are an added or removed transform's inputs.
	Inputs []string `json:"inputs,omitempty"`
	// Changes are what changed in a transform in both plans: "type", "config.KEY...",
	// "windowing", "windowing in effect" (of a stateful transform) and "input".
	Changes []ValueDiff `json:"changes,omitempty"`
	label   string
}

// ValueDiff is a value that changed, as JSON; Old or New is empty when the key is absent.
type ValueDiff struct {
	Key string          `json:"key"`
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// SchemaDiff is an output whose schema changed, or that only one plan has.
type SchemaDiff struct {
	Transform string      `json:"transform"`
	Output    string      `json:"output"`
	Change    string      `json:"change"` // "added", "removed" or "changed"
	Old       string      `json:"old,omitempty"`
	New       string      `json:"new,omitempty"`
	Fields    []FieldDiff `json:"fields,omitempty"`
}

// FieldDiff is a field added (Old empty), removed (New empty) or whose type or nullability
// changed. Types read as in error messages, with ? for a nullable field.
type FieldDiff struct {
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
}

// IODiff is the identity change of a source or sink.
type IODiff struct {
	Kind     string   `json:"kind"`   // "source" or "sink"
	Change   string   `json:"change"` // "added", "removed", "renamed" or "changed"
	Name     string   `json:"name"`
	OldName  string   `json:"old_name,omitempty"`
	Added    []string `json:"added,omitempty"` // identity facts
	Removed  []string `json:"removed,omitempty"`
	OldFeeds []string `json:"old_feeds,omitempty"` // a sink's sources, when they changed
	NewFeeds []string `json:"new_feeds,omitempty"`
}

// OptionDiff is a runner option that changed.
type OptionDiff struct {
	Option string `json:"option"`
	Old    string `json:"old"`
	New    string `json:"new"`
	Note   string `json:"note,omitempty"`
}

// Verdict is whether the new spec can resume from the old one's checkpoints: CompareShapes on
// both shapes, with window state assumed when the old spec has stateful transforms, and the
// changes that check cannot see at start.
type Verdict struct {
	Compatible bool `json:"compatible"`
	// NewPipeline is set when options.name changed: the new spec starts afresh.
	NewPipeline bool `json:"new_pipeline,omitempty"`
	// StateAssumed is set when the old spec has stateful transforms: changes to them are
	// judged as if their window state were open.
	StateAssumed bool          `json:"state_assumed,omitempty"`
	Changes      []ShapeChange `json:"changes"`
	WaysOut      []string      `json:"ways_out,omitempty"`
}

// ShapeChange is one change that matters to a checkpoint (see Change).
type ShapeChange struct {
	What       string `json:"what"`
	Compatible bool   `json:"compatible"`
}

// Plans compares two validated plans of the same pipeline: old, the one running, and cur,
// the one to roll out in its place. Values of both plans' secrets are masked.
func Plans(old, cur *runner.Plan) *Diff {
	var masks secret.Set
	masks.Merge(old.Secrets)
	masks.Merge(cur.Secrets)
	d := &Diff{Old: old.File, New: cur.File, OldSpec: old.SpecHash, NewSpec: cur.SpecHash}
	m := match(old, cur)
	d.Transforms = m.transforms(&masks)
	d.Schemas = m.schemas()
	oldSh, curSh := runner.ShapeOf(old), runner.ShapeOf(cur)
	d.IO = m.io(oldSh, curSh)
	oldName, newName := d.options(old, cur)
	d.Verdict = m.verdict(oldSh, curSh, oldName, newName)
	d.Transforms, d.Schemas, d.IO, d.Options = nonNil(d.Transforms), nonNil(d.Schemas), nonNil(d.IO), nonNil(d.Options)
	d.Verdict.Changes = nonNil(d.Verdict.Changes)
	return d
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Empty reports whether the plans differ in nothing the diff shows.
func (d *Diff) Empty() bool {
	return len(d.Transforms)+len(d.Schemas)+len(d.IO)+len(d.Options) == 0
}

// matching pairs the transforms of two plans by name; a transform only one of them has by
// name is paired as renamed with one of the same type and config that only the other has.
type matching struct {
	old, cur       *runner.Plan
	oldKey, curKey map[*runner.Node]string
	pair           map[*runner.Node]*runner.Node // new -> old
	renamed        map[string]string
}

// nodeKeys names every node of p by its name, numbered ("MapToFields#2") where several
// unnamed transforms of one type share it.
func nodeKeys(p *runner.Plan) map[*runner.Node]string {
	count, seen := map[string]int{}, map[string]int{}
	for _, n := range p.Nodes {
		count[n.Name]++
	}
	out := map[*runner.Node]string{}
	for _, n := range p.Nodes {
		out[n] = n.Name
		if count[n.Name] > 1 {
			seen[n.Name]++
			out[n] = fmt.Sprintf("%s#%d", n.Name, seen[n.Name])
		}
	}
	return out
}

func match(old, cur *runner.Plan) *matching {
	m := &matching{old: old, cur: cur, oldKey: nodeKeys(old), curKey: nodeKeys(cur), pair: map[*runner.Node]*runner.Node{}, renamed: map[string]string{}}
	byKey := map[string]*runner.Node{}
	for _, n := range old.Nodes {
		byKey[m.oldKey[n]] = n
	}
	var added []*runner.Node
	matched := map[*runner.Node]bool{}
	for _, n := range cur.Nodes {
		if o, ok := byKey[m.curKey[n]]; ok {
			m.pair[n], matched[o] = o, true
		} else {
			added = append(added, n)
		}
	}
	for _, o := range old.Nodes {
		if matched[o] {
			continue
		}
		for _, n := range added {
			if m.pair[n] == nil && n.Type == o.Type && same(n.Config(), o.Config()) {
				m.pair[n], matched[o] = o, true
				m.renamed[m.oldKey[o]] = m.curKey[n]
				break
			}
		}
	}
	return m
}

// removed returns the old plan's transforms the new one has no counterpart of.
func (m *matching) removed() []*runner.Node {
	paired := map[*runner.Node]bool{}
	for _, o := range m.pair {
		paired[o] = true
	}
	var out []*runner.Node
	for _, o := range m.old.Nodes {
		if !paired[o] {
			out = append(out, o)
		}
	}
	return out
}

// label names a node for people: "MapToFields 'enrich'", or its type when it has no name.
func label(n *runner.Node, key string) string {
	switch {
	case key != n.Name:
		return n.Type + " #" + key[strings.LastIndex(key, "#")+1:]
	case n.Name == n.Type:
		return n.Type
	}
	return n.Type + " '" + n.Name + "'"
}

// inputs returns n's inputs as "name", "name.tag" or "key: name", with the names of keyOf.
func inputs(n *runner.Node, keyOf map[*runner.Node]string, rename map[string]string) []string {
	var out []string
	for _, e := range n.Inputs {
		s := keyOf[e.From]
		if r, ok := rename[s]; ok {
			s = r
		}
		if e.Tag != component.Main && e.Tag != "" {
			s += "." + e.Tag
		}
		if e.Key != "" {
			s = e.Key + ": " + s
		}
		out = append(out, s)
	}
	return out
}

func (m *matching) transforms(masks *secret.Set) []TransformDiff {
	var out []TransformDiff
	for _, n := range m.cur.Nodes {
		key := m.curKey[n]
		o := m.pair[n]
		if o == nil {
			out = append(out, TransformDiff{Change: "added", Name: key, Type: n.Type, Inputs: inputs(n, m.curKey, nil), label: label(n, key)})
			continue
		}
		t := TransformDiff{Change: "changed", Name: key, Type: n.Type, label: label(n, key)}
		if ok := m.oldKey[o]; ok != key {
			t.Change, t.OldName = "renamed", ok
		}
		if o.Type != n.Type {
			t.Changes = append(t.Changes, valueDiff("type", o.Type, n.Type, masks))
		}
		diffValues(&t.Changes, "config", o.Config(), n.Config(), masks)
		oldState, newState := o.StateID(), n.StateID()
		if ow, nw := o.WindowingAsWritten(), n.WindowingAsWritten(); !same(ow, nw) {
			t.Changes = append(t.Changes, valueDiff("windowing", ow, nw, masks))
		} else if len(oldState) == 2 && len(newState) == 2 && oldState[1] != newState[1] {
			t.Changes = append(t.Changes, ValueDiff{Key: "windowing in effect",
				Old: json.RawMessage(strings.TrimPrefix(oldState[1], "windowing ")), New: json.RawMessage(strings.TrimPrefix(newState[1], "windowing "))})
		}
		if oi, ni := inputs(o, m.oldKey, m.renamed), inputs(n, m.curKey, nil); !slices.Equal(oi, ni) {
			t.Changes = append(t.Changes, valueDiff("input", strings.Join(oi, ", "), strings.Join(ni, ", "), masks))
		}
		if t.Change == "renamed" || len(t.Changes) > 0 {
			out = append(out, t)
		}
	}
	for _, o := range m.removed() {
		key := m.oldKey[o]
		out = append(out, TransformDiff{Change: "removed", Name: key, Type: o.Type, Inputs: inputs(o, m.oldKey, nil), label: label(o, key)})
	}
	return out
}

// same reports whether two plain values (Node.Config, Node.WindowingAsWritten) read the same
// as JSON, whose maps have sorted keys.
func same(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// diffValues appends the keys under path whose values differ, descending into mappings.
func diffValues(out *[]ValueDiff, path string, a, b any, masks *secret.Set) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if a == nil && bok {
		am, aok = map[string]any{}, true
	}
	if b == nil && aok {
		bm, bok = map[string]any{}, true
	}
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, valueDiff(path, a, b, masks))
		}
		return
	}
	all := slices.Sorted(maps.Keys(am))
	for k := range bm {
		if _, ok := am[k]; !ok {
			all = append(all, k)
		}
	}
	slices.Sort(all)
	for _, k := range all {
		av, ain := am[k]
		bv, bin := bm[k]
		switch {
		case !ain:
			*out = append(*out, ValueDiff{Key: path + "." + k, New: raw(bv, masks)})
		case !bin:
			*out = append(*out, ValueDiff{Key: path + "." + k, Old: raw(av, masks)})
		default:
			diffValues(out, path+"."+k, av, bv, masks)
		}
	}
}

func valueDiff(key string, a, b any, masks *secret.Set) ValueDiff {
	d := ValueDiff{Key: key}
	if a != nil {
		d.Old = raw(a, masks)
	}
	if b != nil {
		d.New = raw(b, masks)
	}
	return d
}

// raw is v as compact JSON with secret values masked in its strings.
func raw(v any, masks *secret.Set) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(maskValue(v, masks)); err != nil {
		return json.RawMessage(`"unencodable"`)
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

func maskValue(v any, masks *secret.Set) any {
	switch t := v.(type) {
	case string:
		return masks.Mask(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[masks.Mask(k)] = maskValue(e, masks)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = maskValue(e, masks)
		}
		return out
	}
	return v
}

func (m *matching) schemas() []SchemaDiff {
	var out []SchemaDiff
	for _, n := range m.cur.Nodes {
		o := m.pair[n]
		if o == nil {
			continue
		}
		name := m.curKey[n]
		for _, no := range n.Outputs {
			oo, ok := o.Output(no.Tag)
			switch {
			case !ok:
				out = append(out, SchemaDiff{Transform: name, Output: no.Tag, Change: "added", New: schemaString(no.Schema)})
			case oo.Schema != nil && no.Schema != nil:
				if f := fieldDiffs(oo.Schema, no.Schema); len(f) > 0 {
					out = append(out, SchemaDiff{Transform: name, Output: no.Tag, Change: "changed", Fields: f})
				}
			}
		}
		for _, oo := range o.Outputs {
			if _, ok := n.Output(oo.Tag); !ok {
				out = append(out, SchemaDiff{Transform: name, Output: oo.Tag, Change: "removed", Old: schemaString(oo.Schema)})
			}
		}
	}
	return out
}

func schemaString(s *schemas.Schema) string {
	if s == nil {
		return "{}"
	}
	return s.String()
}

func fieldType(f schemas.Field) string {
	if f.Nullable {
		return f.Type.String() + "?"
	}
	return f.Type.String()
}

// fieldDiffs lists the fields added, changed (in the new order) and removed (in the old).
func fieldDiffs(old, cur *schemas.Schema) []FieldDiff {
	var out []FieldDiff
	for _, f := range cur.Fields {
		of, ok := old.Field(f.Name)
		switch {
		case !ok:
			out = append(out, FieldDiff{Field: f.Name, New: fieldType(f)})
		case of.Nullable != f.Nullable || !of.Type.Equal(f.Type):
			out = append(out, FieldDiff{Field: f.Name, Old: fieldType(of), New: fieldType(f)})
		}
	}
	for _, f := range old.Fields {
		if _, ok := cur.Field(f.Name); !ok {
			out = append(out, FieldDiff{Field: f.Name, Old: fieldType(f)})
		}
	}
	return out
}

func (m *matching) io(oldSh, curSh *component.SpecShape) []IODiff {
	var out []IODiff
	kindOf := func(n *runner.Node) (string, map[string][]string, map[string][]string) {
		switch {
		case n.Spec != nil && n.Spec.Kind == component.KindSource:
			return "source", oldSh.Sources, curSh.Sources
		case n.Spec != nil && n.Spec.Kind == component.KindSink:
			return "sink", oldSh.Sinks, curSh.Sinks
		}
		return "", nil, nil
	}
	for _, n := range m.cur.Nodes {
		kind, oldIDs, curIDs := kindOf(n)
		if kind == "" {
			continue
		}
		d := IODiff{Kind: kind, Name: n.Name}
		o := m.pair[n]
		if o != nil {
			if was, _, _ := kindOf(o); was != kind {
				o = nil
			}
		}
		if o == nil {
			d.Change, d.Added = "added", curIDs[n.Name]
			if kind == "sink" {
				d.NewFeeds = curSh.Feeds[n.Name]
			}
			out = append(out, d)
			continue
		}
		d.Change = "changed"
		if o.Name != n.Name {
			d.Change, d.OldName = "renamed", o.Name
		}
		d.Removed, d.Added = minus(oldIDs[o.Name], curIDs[n.Name]), minus(curIDs[n.Name], oldIDs[o.Name])
		if kind == "sink" {
			var was []string
			for _, s := range oldSh.Feeds[o.Name] {
				was = append(was, m.renamedTo(s))
			}
			slices.Sort(was)
			if !slices.Equal(was, curSh.Feeds[n.Name]) {
				d.OldFeeds, d.NewFeeds = oldSh.Feeds[o.Name], curSh.Feeds[n.Name]
			}
		}
		if d.Change == "renamed" || len(d.Added)+len(d.Removed)+len(d.OldFeeds)+len(d.NewFeeds) > 0 {
			out = append(out, d)
		}
	}
	for _, o := range m.removed() {
		kind, oldIDs, _ := kindOf(o)
		if kind != "" {
			out = append(out, IODiff{Kind: kind, Change: "removed", Name: o.Name, Removed: oldIDs[o.Name]})
		}
	}
	return out
}

func (m *matching) renamedTo(name string) string {
	if r, ok := m.renamed[name]; ok {
		return r
	}
	return name
}

// defaultName is the name of a pipeline without options.name: its file's name.
func defaultName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// options lists the runner options that changed and returns the names the two plans run
// under. A pipeline without options.name is named after its file: the old one is taken to
// run from the new one's file, which replaces it.
func (d *Diff) options(old, cur *runner.Plan) (string, string) {
	oldName, curName := old.Options.Name, cur.Options.Name
	oldDefault, curDefault := oldName == defaultName(old.File), curName == defaultName(cur.File)
	if oldDefault {
		oldName = defaultName(cur.File)
	}
	ov, cv := reflect.ValueOf(old.Options), reflect.ValueOf(cur.Options)
	for i := range ov.NumField() {
		f := ov.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		a, b := optionValue(ov.Field(i)), optionValue(cv.Field(i))
		if f.Name == "Name" {
			a, b = oldName, curName
		}
		if a == b {
			continue
		}
		od := OptionDiff{Option: key, Old: a, New: b}
		if f.Name == "Name" {
			od.Note = "a new pipeline, which starts afresh"
			switch {
			case oldDefault && curDefault:
				od.Note += " (both named after their file)"
			case oldDefault:
				od.Note += " (the old one is named after its file)"
			case curDefault:
				od.Note += " (the new one is named after its file)"
			}
		}
		d.Options = append(d.Options, od)
	}
	return oldName, curName
}

func optionValue(v reflect.Value) string {
	if d, ok := v.Interface().(component.Duration); ok {
		return time.Duration(d).String()
	}
	return fmt.Sprint(v.Interface())
}

// checkpointByName reports whether a sink with these identity facts keeps its checkpoint
// under its own name (Kafka: the checkpoint record's key; BigQuery: the state file), so that
// a renamed one finds none. Iceberg and files sinks keep it in the table or directory.
func checkpointByName(facts []string) bool {
	return len(facts) > 0 && (strings.HasPrefix(facts[0], "kafka ") || strings.HasPrefix(facts[0], "bigquery "))
}

// verdict judges the upgrade: CompareShapes on both shapes, with window state assumed when
// the old spec has stateful transforms, and the old shape's renamed sinks under their new
// names where their checkpoint stays with their table or directory; then what the check at
// start cannot see: a renamed sink whose checkpoint is kept under its name, and, under a new
// options.name, a files sink that still writes where the old pipeline did.
func (m *matching) verdict(oldSh, curSh *component.SpecShape, oldName, curName string) Verdict {
	v := Verdict{StateAssumed: len(oldSh.Stateful) > 0}
	add := func(ok bool, format string, args ...any) {
		v.Changes = append(v.Changes, ShapeChange{What: fmt.Sprintf(format, args...), Compatible: ok})
	}
	if oldName != curName {
		v.NewPipeline = true
		for _, sink := range slices.Sorted(maps.Keys(curSh.Sinks)) {
			for _, f := range curSh.Sinks[sink] {
				if !strings.HasPrefix(f, "files ") {
					continue
				}
				for _, was := range oldSh.Sinks {
					if slices.Contains(was, f) {
						add(false, "sink %s writes %s, which holds the output of pipeline %s: pipeline %s refuses it; choose a new path", sink, f, oldName, curName)
						break
					}
				}
			}
		}
	} else {
		// A renamed sink is compared under its new name, unless it keeps its checkpoint under
		// its name: then it finds none, which is judged below.
		aligned := &component.SpecShape{Sources: oldSh.Sources, Sinks: maps.Clone(oldSh.Sinks), Feeds: maps.Clone(oldSh.Feeds), Stateful: oldSh.Stateful}
		cur := &component.SpecShape{Sources: curSh.Sources, Sinks: maps.Clone(curSh.Sinks), Feeds: maps.Clone(curSh.Feeds), Stateful: curSh.Stateful}
		var byName []string // old names of renamed sinks that keep their checkpoint under their name
		for _, was := range slices.Sorted(maps.Keys(oldSh.Sinks)) {
			now, ok := m.renamed[was]
			if _, sink := curSh.Sinks[now]; !ok || !sink {
				continue
			}
			if checkpointByName(oldSh.Sinks[was]) {
				byName = append(byName, was)
				delete(cur.Sinks, now)
			} else {
				aligned.Sinks[now], aligned.Feeds[now] = aligned.Sinks[was], aligned.Feeds[was]
			}
			delete(aligned.Sinks, was)
		}
		refusedAnyway := map[string]bool{}
		for _, c := range runner.CompareShapes(aligned, cur, false) {
			refusedAnyway[c.What] = !c.Compatible
		}
		stateDependent, refused := false, false
		for _, c := range runner.CompareShapes(aligned, cur, v.StateAssumed) {
			what := c.What
			if !c.Compatible && !refusedAnyway[what] {
				what, stateDependent = what+" (if window state is open)", true
			}
			refused = refused || !c.Compatible
			add(c.Compatible, "%s", what)
		}
		for _, was := range byName {
			now := m.renamed[was]
			if others := m.otherSinks(oldSh, curSh, now); len(others) > 0 {
				add(true, "sink %s is now named %s: it keeps its checkpoint under its name, so %s starts where %s are", was, now, now, list(others))
			} else {
				add(false, "sink %s is now named %s: it keeps its checkpoint under its name, so %s finds none and starts at the sources' default positions; keep the name %s", was, now, now, was)
			}
		}
		if refused {
			if stateDependent {
				v.WaysOut = append(v.WaysOut, "drain the old spec first: run it with --stop-at-end (windows of a bounded run fire at its end), then start the new one")
			}
			v.WaysOut = append(v.WaysOut, "give the new spec another options.name: a new pipeline, which starts afresh",
				"sluice run "+m.cur.File+" --allow-reset-state: sources resume from the offsets they still match, new ones start at their default position, and window state that no longer fits is dropped")
		}
	}
	v.Compatible = !slices.ContainsFunc(v.Changes, func(c ShapeChange) bool { return !c.Compatible })
	return v
}

// otherSinks returns the sinks of both shapes, under the same name, that share a source with
// the new shape's sink.
func (m *matching) otherSinks(oldSh, curSh *component.SpecShape, sink string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(curSh.Sinks)) {
		if _, ok := oldSh.Sinks[k]; !ok || k == sink {
			continue
		}
		if slices.ContainsFunc(curSh.Feeds[k], func(s string) bool { return slices.Contains(curSh.Feeds[sink], s) }) {
			out = append(out, k)
		}
	}
	return out
}

// minus returns the facts of a that b lacks, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, f := range a {
		if !slices.Contains(b, f) {
			out = append(out, f)
		}
	}
	return out
}

// list is facts for people: joined by commas, "nothing" for none.
func list(fs []string) string {
	if len(fs) == 0 {
		return "nothing"
	}
	return strings.Join(fs, ", ")
}
