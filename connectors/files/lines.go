package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxLineBytes is the longest line the readers accept, terminator excluded. A longer line
// stops the pipeline with an error that names the file and the line's offset.
const MaxLineBytes = 16 << 20

// readBufferBytes is the size of the buffered reader over a file: lines up to this size are
// returned without copying into an accumulator.
const readBufferBytes = 1 << 20

// errLineTooLong is returned by lineReader.next for a line longer than its limit.
var errLineTooLong = errors.New("line is too long")

// lineReader reads lines from a byte stream and tracks the offset of each, so that a reader
// can resume at any line start. A line ends at '\n'; a "\r\n" terminator is removed whole, and
// a last line without a terminator is a line too.
type lineReader struct {
	br  *bufio.Reader
	off int64 // offset of the next unread byte
	max int   // longest line accepted
	acc []byte
}

func newLineReader(r io.Reader, off int64, bufSize, maxLine int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, bufSize), off: off, max: maxLine}
}

// next returns the next line without its terminator and the offset where it starts. The line
// is valid until the next call. At the end of the stream it returns io.EOF; a line longer
// than the limit returns an error wrapping errLineTooLong, after which the reader is unusable.
func (r *lineReader) next() (line []byte, start int64, err error) {
	start = r.off
	frag, err := r.br.ReadSlice('\n')
	line = frag
	if err == bufio.ErrBufferFull {
		r.acc = append(r.acc[:0], frag...)
		for err == bufio.ErrBufferFull {
			if len(r.acc) > r.max+2 { // room for the terminator
				return nil, start, fmt.Errorf("%w: more than %d bytes", errLineTooLong, r.max)
			}
			frag, err = r.br.ReadSlice('\n')
			r.acc = append(r.acc, frag...)
		}
		line = r.acc
	}
	switch {
	case err == io.EOF && len(line) == 0:
		return nil, start, io.EOF
	case err != nil && err != io.EOF:
		return nil, start, err
	}
	r.off += int64(len(line))
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	if len(line) > r.max {
		return nil, start, fmt.Errorf("%w: %d bytes, more than %d", errLineTooLong, len(line), r.max)
	}
	return line, start, nil
}

// isEmpty reports whether a line has no content: ReadFromText skips such lines.
func isEmpty(line []byte) bool { return len(line) == 0 }

// isBlank reports whether a line holds only spaces and tabs: ReadFromJson skips such lines.
func isBlank(line []byte) bool { return len(bytes.Trim(line, " \t\r")) == 0 }

// listFiles returns the files path names, in the order they are read: path itself when it is
// a file; the regular files of a directory, sorted, without names starting with "." or "_";
// or the regular files a glob pattern matches, sorted, with the same exclusions. Paths are
// cleaned and stay relative when path is. A directory without files and a pattern that
// matches nothing give no files and no error; a plain path that does not exist is an error
// wrapping fs.ErrNotExist.
func listFiles(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("path is empty")
	}
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", path, err)
		}
		var out []string
		for _, e := range entries {
			name := filepath.Join(path, e.Name())
			if ok, err := readable(name, e.Name()); err != nil {
				return nil, err
			} else if ok {
				out = append(out, name)
			}
		}
		return out, nil
	case err == nil:
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path)
		}
		return []string{filepath.Clean(path)}, nil
	case errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(path, "*?["):
		matches, err := filepath.Glob(path)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", path, err)
		}
		var out []string
		for _, m := range matches {
			if ok, err := readable(m, filepath.Base(m)); err != nil {
				return nil, err
			} else if ok {
				out = append(out, filepath.Clean(m))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	return nil, fmt.Errorf("read %s: %w", path, err)
}

// readable reports whether name (base name base) is a regular file the readers take: not
// hidden, not starting with "_" (metadata such as a sink's _checkpoint.json), symlinks
// followed.
func readable(name, base string) (bool, error) {
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
		return false, nil
	}
	info, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // a dangling symlink, or removed meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	return info.Mode().IsRegular(), nil
}

// sourceName is the Position.Source of records read from file: its absolute path, so that
// a file keeps its identity in checkpoints whatever the working directory or the spelling of
// the configured path.
func sourceName(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return "file:" + file
}

// firstLines returns up to n non-blank lines from the start of files, in order.
func firstLines(files []string, n int) ([][]byte, error) {
	var out [][]byte
	for _, name := range files {
		if len(out) == n {
			break
		}
		err := func() error {
			f, err := os.Open(name)
			if err != nil {
				return fmt.Errorf("open %s: %w", name, err)
			}
			defer f.Close()
			lr := newLineReader(f, 0, 64<<10, MaxLineBytes)
			for len(out) < n {
				line, start, err := lr.next()
				switch {
				case err == io.EOF:
					return nil
				case err != nil:
					return fmt.Errorf("read %s at offset %d: %w", name, start, err)
				case !isBlank(line):
					out = append(out, bytes.Clone(line))
				}
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
