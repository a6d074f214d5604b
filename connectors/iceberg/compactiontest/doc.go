// Package compactiontest holds the end-to-end test of WriteToIceberg's compaction while
// streaming: half a minute of a sluice process committing every second, killed inside two
// compactions. It is a package of its own so that `go test ./...` runs it beside the other
// packages instead of after connectors/iceberg's tests; `go test -short` skips it.
package compactiontest
