package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/component"
)

// Names in an output directory (docs/files.md).
const (
	epochPrefix    = "epoch-"
	tmpPrefix      = ".epoch-"
	tmpSuffix      = ".tmp"
	lanePrefix     = "lane-"
	checkpointFile = "_checkpoint.json"
	epochDigits    = 20
)

// epochName is the name of the committed directory of epoch e.
func epochName(e uint64) string { return fmt.Sprintf("%s%0*d", epochPrefix, epochDigits, e) }

// tmpName is the name of the directory in which epoch e is assembled.
func tmpName(e uint64) string { return fmt.Sprintf("%s%0*d%s", tmpPrefix, epochDigits, e, tmpSuffix) }

// laneName is the name of lane l's file in an epoch directory.
func laneName(l int, ext string) string { return lanePrefix + strconv.Itoa(l) + ext }

// parseEpochName returns the epoch of a committed directory name.
func parseEpochName(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, epochPrefix)
	if !ok || len(digits) != epochDigits {
		return 0, false
	}
	e, err := strconv.ParseUint(digits, 10, 64)
	return e, err == nil
}

// isTmpName reports whether name is an epoch being assembled (or left over by a crash).
func isTmpName(name string) bool {
	return strings.HasPrefix(name, tmpPrefix) && strings.HasSuffix(name, tmpSuffix)
}

// committedEpochs returns the committed epochs in dir, ascending.
func committedEpochs(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []uint64
	for _, e := range entries {
		if ep, ok := parseEpochName(e.Name()); ok && e.IsDir() {
			out = append(out, ep)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// readCheckpoint reads the checkpoint of a committed (or assembled) epoch directory. A
// missing file is an error wrapping fs.ErrNotExist.
func readCheckpoint(epochDir string) (*component.Checkpoint, error) {
	name := filepath.Join(epochDir, checkpointFile)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp component.Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", name, err)
	}
	return &cp, nil
}

// writeFileSync writes a new file and makes its content durable.
func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

// syncDir makes the entries of a directory (files created, renamed or removed in it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ReadCommitted returns every line that a writer of a line format (WriteToJson, WriteToText,
// WriteToCsv) committed to dir, in epoch order and, within an epoch, in file name order,
// without line terminators. Epochs still being written or left over by a crash are not
// included. It is meant for tests and summaries; a reader of the format given dir reads the
// same files (see docs/files.md).
func ReadCommitted(dir string) ([][]byte, error) {
	files, err := committedFiles(dir)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		out = append(out, splitLines(data)...)
	}
	return out, nil
}

// splitLines splits newline-terminated lines; a last line without a terminator counts.
func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte{'\n'})
		out = append(out, line[:len(line):len(line)])
		if !found {
			break
		}
		data = rest
	}
	return out
}

// errNoCheckpoint marks a committed epoch directory without its checkpoint.
var errNoCheckpoint = errors.New("has no " + checkpointFile)

// notExist reports whether err means a missing file.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
