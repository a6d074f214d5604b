package iceberg

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// minFree is the free space below which a SQLite I/O error is put down to a full disk:
// SQLite reports a full disk under its WAL index as "disk I/O error (4874)"
// (SQLITE_IOERR_SHMSIZE), not as SQLITE_FULL.
const minFree = 64 << 10

// diskError explains a failure of the disk under the local SQLite catalog at path ("" for
// another catalog), which SQLite reports without naming a file or the cause ("database or
// disk is full (13)", "disk I/O error (4874)"): a full disk becomes "no space left on device"
// with the file's path, and another I/O error names the file. Other errors are returned as
// they are.
func diskError(err error, path string) error {
	if err == nil || path == "" {
		return err
	}
	var code int
	var se *sqlite.Error
	switch msg := err.Error(); {
	case errors.As(err, &se):
		code = se.Code() & 0xff // the primary result code of an extended one
	case strings.Contains(msg, "database or disk is full"):
		code = sqlite3.SQLITE_FULL
	case strings.Contains(msg, "disk I/O error"):
		code = sqlite3.SQLITE_IOERR
	default:
		return err
	}
	switch {
	case code == sqlite3.SQLITE_FULL, code == sqlite3.SQLITE_IOERR && freeSpace(path) < minFree:
		return fmt.Errorf("the catalog %s: no space left on device: %w", path, err)
	case code == sqlite3.SQLITE_IOERR:
		return fmt.Errorf("the catalog %s: input/output error: %w", path, err)
	}
	return err
}
