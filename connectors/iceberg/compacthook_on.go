//go:build sluicetest

package iceberg

import (
	"fmt"
	"os"
	"time"
)

// compactPauseHook returns the hook CompactPauseEnv asks for, or nil: every compaction
// pauses that long after writing its files, before its catalog commit and after it, and
// says so on stderr ("iceberg-compact-pause STEP", "iceberg-compact-resume STEP").
func compactPauseHook() func(step string) error {
	v := os.Getenv(CompactPauseEnv)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", CompactPauseEnv, v)
		return nil
	}
	return func(step string) error {
		fmt.Fprintf(os.Stderr, "iceberg-compact-pause %s\n", step)
		time.Sleep(d)
		fmt.Fprintf(os.Stderr, "iceberg-compact-resume %s\n", step)
		return nil
	}
}
