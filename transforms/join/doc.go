// Package join is Beam YAML's Join transform: two or more named inputs joined on equal
// fields (inner, left, right, outer, or outer for some inputs), with Beam's output schema
// (every field of every input, later duplicates renamed name0, name1 ... as Beam SQL does;
// or the fields config's selection) and nullable fields for the sides an outer join pads.
//
// A Join groups its inputs' records by window (and by the join key when every input shares
// one) in the keyed window state of transforms/combine, so that windows, watermarks, late
// records and checkpoints work as for Combine; when a window fires, its records are joined in
// memory, input after input in the order of input:, as Beam's SQL joins them
// (docs/windows.md, "Join").
package join
