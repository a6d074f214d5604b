// Package files holds the local file connectors: ReadFromText and ReadFromJson read lines of
// the files present when the pipeline starts, each file a partition whose offsets are byte
// offsets; WriteToText and WriteToJson write an output directory exactly once, one directory
// per epoch, made visible by an atomic rename together with the checkpoint it stands on.
//
// The readers and the writer are shared by both formats; only the step between a line and a
// row differs. docs/files.md describes the on-disk layout and the commit protocol.
package files
