//go:build sluicetest

package iceberg

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// pauseHook returns the hook that PauseEnv asks for, or nil.
func pauseHook() func(step string) error { return envPause(PauseEnv, "iceberg") }

// envPause returns a hook that pauses at every step for the duration the environment
// variable env gives, writing "LABEL-pause STEP" and "LABEL-resume STEP" to stderr; nil when
// env is unset.
func envPause(env, label string) func(step string) error {
	v := os.Getenv(env)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", env, v)
		return nil
	}
	return func(step string) error {
		fmt.Fprintf(os.Stderr, "%s-pause %s\n", label, step)
		time.Sleep(d)
		fmt.Fprintf(os.Stderr, "%s-resume %s\n", label, step)
		return nil
	}
}

// stateInline returns the largest window state kept inline in a snapshot summary:
// StateInlineEnv's value when set, so that crash tests of small states go through state files.
func stateInline() int {
	if n, err := strconv.Atoi(os.Getenv(StateInlineEnv)); err == nil && n >= 0 {
		return n
	}
	return stateInlineMax
}
