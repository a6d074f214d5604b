//go:build !sluicetest

package iceberg

// compactPauseHook returns nil: the crash tests' pauses exist only in sluicetest builds.
func compactPauseHook() func(step string) error { return nil }
