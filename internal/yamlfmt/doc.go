// Package yamlfmt formats pipeline files canonically while keeping their comments, so that a
// review shows only real changes. It works on gopkg.in/yaml.v3 nodes but prints the block
// structure itself: the yaml.v3 encoder drops blank lines and moves some comments, which would
// make its output neither stable nor faithful. Scalars and single-line flow collections are
// rendered by the encoder, block scalars are copied from the source. The style and its
// rationale are in docs/fmt.md.
//
// Format refuses, rather than risk, a change of meaning: it decodes the input and its output
// and compares them, checks that every comment is still there, and that formatting the output
// again changes nothing.
package yamlfmt
