//go:build !sluicetest

package bigquery

// pauseAt does nothing: the crash tests' pauses exist only in sluicetest builds.
func pauseAt(string) error { return nil }
