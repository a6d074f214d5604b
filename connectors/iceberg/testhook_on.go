//go:build sluicetest

package iceberg

import (
	"fmt"
	"os"
	"time"
)

// pauseHook returns the hook that PauseEnv asks for, or nil.
func pauseHook() func(step string) error {
	v := os.Getenv(PauseEnv)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", PauseEnv, v)
		return nil
	}
	return func(step string) error {
		fmt.Fprintf(os.Stderr, "iceberg-pause %s\n", step)
		time.Sleep(d)
		fmt.Fprintf(os.Stderr, "iceberg-resume %s\n", step)
		return nil
	}
}
