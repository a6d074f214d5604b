//go:build !sluicetest

package iceberg

// pauseHook returns nil: the crash tests' pauses exist only in sluicetest builds.
func pauseHook() func(step string) error { return nil }

// stateInline returns the largest window state kept inline in a snapshot summary.
func stateInline() int { return stateInlineMax }
