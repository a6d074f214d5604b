//go:build sluicetest

package bigquery

import (
	"fmt"
	"os"
	"sync"
	"time"
)

var pause = sync.OnceValue(func() time.Duration {
	v := os.Getenv(PauseEnv)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a positive duration; ignored\n", PauseEnv, v)
		return 0
	}
	return d
})

// pauseAt pauses at step as PauseEnv asks, saying so on stderr.
func pauseAt(step string) error {
	d := pause()
	if d == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "bigquery-pause %s\n", step)
	time.Sleep(d)
	fmt.Fprintf(os.Stderr, "bigquery-resume %s\n", step)
	return nil
}
