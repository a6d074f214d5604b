// Package create is the Create source of Beam YAML: a fixed list of elements written in the
// pipeline file, for tests and examples. Its schema is inferred from the elements; it reads
// them once, resumably by index, and ends.
package create
