package embedded

import (
	"fmt"
	"os"
	"path/filepath"
)

// snapshot copies the data directory dir to a new temporary directory and returns its path.
// A missing dir gives an empty directory (a broker with no data yet).
func snapshot(dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "sluice-kafka-snapshot-")
	if err != nil {
		return "", fmt.Errorf("copying the embedded broker's data %s: %w", dir, err)
	}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return tmp, nil
	}
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		return "", fmt.Errorf("copying the embedded broker's data %s: %w", dir, err)
	}
	return filepath.Clean(tmp), nil
}
