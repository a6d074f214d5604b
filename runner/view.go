package runner

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// The methods of this file are the read-only view of a plan's transforms that the tools
// beside the runner (tools/diff, tools/pipelinetest, tools/status) use; the runner keeps the
// rest of a Node to itself.

// Config returns n's config: mapping as written, as plain values (maps with string keys,
// lists, scalars), or nil when it has none.
func (n *Node) Config() any { return decoded(n.spec.Config) }

// WindowingAsWritten returns n's own windowing: key as written, as plain values, or nil when
// it has none. The windowing in effect, decoded, is part of StateID.
func (n *Node) WindowingAsWritten() any { return decoded(n.spec.Windowing) }

// StateID returns the identity of a stateful transform's state (what component.SpecShape
// records of it): its config and the windowing in effect, each as canonical JSON behind a
// label ("config {...}", "windowing {...}"); nil for a transform that holds no state.
func (n *Node) StateID() []string { return slices.Clone(n.stateID) }

// decoded is a YAML node as plain values, nil for none.
func decoded(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil
	}
	return jsonable(v)
}
