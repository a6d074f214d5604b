//go:build sluicetest

package iceberg

// compactPauseHook returns the hook CompactPauseEnv asks for, or nil: every compaction
// pauses that long after writing its files, before its catalog commit and after it, and
// says so on stderr ("iceberg-compact-pause STEP", "iceberg-compact-resume STEP").
func compactPauseHook() func(step string) error {
	return envPause(CompactPauseEnv, "iceberg-compact")
}
