package runner

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/component"
)

// lineageOf is what every commit of p records of its spec: the spec's hash, the sluice
// version, the git state of the pipeline file's work tree, and the spec's shape.
func lineageOf(p *Plan, version string) *component.Lineage {
	l := &component.Lineage{SpecHash: p.SpecHash, Version: version, Shape: ShapeOf(p)}
	if p.File != "" {
		l.GitCommit, l.GitDirty = gitState(filepath.Dir(p.File))
	}
	return l
}

// gitState returns the commit checked out in the git work tree holding dir and whether the
// tree has uncommitted changes; "" when dir is in no work tree or git is not installed.
func gitState(dir string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return commit, err == nil && len(strings.TrimSpace(string(status))) > 0
}

// ShapeOf returns what the checkpoints of p depend on (component.SpecShape): the identity of
// every source and sink, the sources upstream of each sink, and the identity of every stateful
// transform (its config and the windowing in effect).
func ShapeOf(p *Plan) *component.SpecShape {
	sh := &component.SpecShape{Sources: map[string][]string{}, Sinks: map[string][]string{}, Feeds: map[string][]string{}}
	for _, n := range p.Nodes {
		switch {
		case n.Spec != nil && n.Spec.Kind == component.KindSource:
			sh.Sources[n.Name] = identityOf(n)
		case n.Spec != nil && n.Spec.Kind == component.KindSink:
			sh.Sinks[n.Name] = identityOf(n)
			for _, src := range n.UpstreamSources() {
				sh.Feeds[n.Name] = append(sh.Feeds[n.Name], src.Name)
			}
			slices.Sort(sh.Feeds[n.Name])
		}
		if len(n.stateID) > 0 {
			if sh.Stateful == nil {
				sh.Stateful = map[string][]string{}
			}
			sh.Stateful[n.Name] = n.stateID
		}
	}
	return sh
}

// identityOf is a source's or sink's Identity, or its type when it has none. A sink of an
// offline plan that was checked for its config only (Node.unknown) has its whole config as
// identity: any change to it counts, so that sluice diff never calls a change compatible
// that it could not judge.
func identityOf(n *Node) []string {
	if id, ok := n.Impl.(component.Identity); ok {
		return id.Identity()
	}
	if n.unknown {
		return []string{"type " + n.Type, "config " + canonical(n.spec.Config)}
	}
	return []string{"type " + n.Type}
}

// UpstreamSources returns the sources n reads from, directly or through transforms.
func (n *Node) UpstreamSources() []*Node {
	seen := map[*Node]bool{}
	var out []*Node
	var walk func(*Node)
	walk = func(m *Node) {
		if seen[m] {
			return
		}
		seen[m] = true
		if _, ok := m.Impl.(component.Source); ok {
			out = append(out, m)
		}
		for _, e := range m.Inputs {
			walk(e.From)
		}
	}
	walk(n)
	return out
}

// canonical is n as JSON with sorted keys ("null" for none).
func canonical(n *yaml.Node) string {
	b, err := json.Marshal(decoded(n))
	if err != nil {
		return "unencodable"
	}
	return string(b)
}

// jsonable turns the map[any]any yaml.v3 may decode into map[string]any.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonable(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			kb, _ := json.Marshal(jsonable(k))
			m[strings.Trim(string(kb), `"`)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonable(e)
		}
		return t
	}
	return v
}
