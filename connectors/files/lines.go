package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sluicehq/sluice/schemas"
)

// MaxLineBytes is the longest line the readers accept, terminator excluded. A longer line
// stops the pipeline with an error that names the file and the line's offset.
const MaxLineBytes = 16 << 20

// maxLineBytes is the limit the readers apply: MaxLineBytes, lowered by tests.
var maxLineBytes = MaxLineBytes

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

// lineRecords reads the lines of a file as records, leaving out those skip rejects (they
// still advance the offset). Offsets are byte offsets of line starts.
type lineRecords struct {
	lr   *lineReader
	name string
	skip func(line []byte) bool
	// numbered says whether records carry their line numbers; line is the number of the
	// last line read.
	numbered bool
	line     int
}

func (r *lineRecords) offset() int64 { return r.lr.off }

func (r *lineRecords) next() (record, error) {
	for {
		line, start, err := r.lr.next()
		switch {
		case errors.Is(err, errLineTooLong):
			return record{}, fmt.Errorf("%s at offset %d: %w", r.name, start, err)
		case err == io.EOF:
			return record{}, err
		case err != nil:
			return record{}, fmt.Errorf("read %s: %w", r.name, err)
		}
		rec := record{raw: line, start: start}
		if r.numbered {
			r.line++
			rec.line = r.line
		}
		if !r.skip(line) {
			return rec, nil
		}
	}
}

// openLines returns the line reader of a file from offset off, which must be the start of a
// line of a file at least that long: otherwise the file changed since the checkpoint. Line
// numbers, when numbered, count from the start of the file.
func openLines(f *os.File, name string, size, off int64, skip func([]byte) bool, numbered bool) (*lineRecords, error) {
	if err := checkResume(f, name, off, size); err != nil {
		return nil, err
	}
	before := 0
	if off > 0 && numbered {
		n, err := countLines(io.NewSectionReader(f, 0, off))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		before = n
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek %s to offset %d: %w", name, off, err)
	}
	lr := newLineReader(f, off, readBufferBytes, maxLineBytes)
	return &lineRecords{lr: lr, name: name, skip: skip, numbered: numbered, line: before}, nil
}

// countLines counts the line terminators of r.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func checkResume(f *os.File, name string, off, size int64) error {
	switch {
	case off < 0 || off > size:
		return fmt.Errorf("the checkpoint resumes %s at offset %d, but the file has %d bytes: it was truncated or replaced since; restore it, or write to a new output to read it from the start", name, off, size)
	case off == 0 || off == size:
		return nil
	}
	var prev [1]byte
	if _, err := f.ReadAt(prev[:], off-1); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if prev[0] != '\n' {
		return fmt.Errorf("the checkpoint resumes %s at offset %d, which is not the start of a line: the file changed since; restore it, or write to a new output to read it from the start", name, off)
	}
	return nil
}

// lineFormat is the fileFormat of a format of one record per line.
func lineFormat(skip func([]byte) bool, newDecoder func() recordDecoder) fileFormat {
	return fileFormat{
		open: func(f *os.File, name string, size, off int64) (records, error) {
			return openLines(f, name, size, off, skip, false)
		},
		newDecoder: newDecoder,
	}
}

// writeChunkBytes is how much encoded output a lane buffers before writing it to its file.
const writeChunkBytes = 256 << 10

// lineEncoder writes one line per row, after an optional header line.
type lineEncoder struct {
	w    io.Writer
	buf  []byte
	line func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, error)
	// columns, with a header, is how many fields it names: rows that gained fields at their
	// end mid-run (ReadFromKafka's follow_schema_updates) are written without them.
	columns int
}

func (e *lineEncoder) encode(b *schemas.Batch, s *schemas.Schema) error {
	var err error
	for i, row := range b.Rows {
		if e.columns > 0 && len(row) > e.columns {
			row = row[:e.columns]
		}
		if e.buf, err = e.line(e.buf, s, row); err != nil {
			return atRecord(b, i, err)
		}
		e.buf = append(e.buf, '\n')
		if len(e.buf) >= writeChunkBytes {
			if err := e.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *lineEncoder) flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

func (e *lineEncoder) finish() error { return e.flush() }

// lineWriteFormat is the writeFormat of a format of one row per line; header, when not nil,
// gives the first line of every file.
func lineWriteFormat(ext string, header func(s *schemas.Schema) []byte,
	line func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, error)) writeFormat {
	return writeFormat{ext: ext, newEncoder: func(w io.Writer, s *schemas.Schema) (fileEncoder, error) {
		e := &lineEncoder{w: w, line: line}
		if header != nil {
			e.buf, e.columns = append(header(s), '\n'), len(s.Fields)
		}
		return e, nil
	}}
}
