package embedded

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a broker's goroutines (its listeners, its cluster
// loop, a recovery scan) outlive the broker's Close. The shared in-memory broker lives as long
// as the process by design, so it is closed first.
func TestMain(m *testing.M) {
	code := m.Run()
	if inMemory != nil {
		inMemory.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
