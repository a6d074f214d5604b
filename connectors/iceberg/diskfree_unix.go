//go:build unix

package iceberg

import (
	"path/filepath"
	"syscall"
)

// freeSpace returns the bytes that an unprivileged process may still write to the file system
// holding path's directory, or the most an int64 holds when it cannot tell.
func freeSpace(path string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return 1<<63 - 1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
