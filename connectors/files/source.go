package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Batch limits of the readers: a batch holds up to maxBatchLines lines of one file and stops
// early once it holds maxBatchBytes.
const (
	maxBatchLines = 1000
	maxBatchBytes = 4 << 20
)

// lineDecoder turns one line into a row. One goroutine uses it at a time.
type lineDecoder func(line []byte) (schemas.Row, error)

// readFormat is what distinguishes ReadFromJson from ReadFromText.
type readFormat struct {
	// skip reports whether a line is not a record (it still advances the offset).
	skip func(line []byte) bool
	// newDecoder returns a decoder for one goroutine.
	newDecoder func() lineDecoder
}

// source reads the files of a path, each file a partition of its own. Read and Offsets run
// on one goroutine; Decode runs on many.
type source struct {
	path   string
	schema *schemas.Schema
	format readFormat
	errOut *component.ErrorOutput
	pool   sync.Pool // of lineDecoder
	// maxLine is the longest line accepted (MaxLineBytes; tests lower it).
	maxLine int

	files   []string
	next    int         // index in files of the next file to open
	open    []*openFile // the files being read, at most filesAtOnce
	turn    int         // which of open the next batch comes from
	offsets schemas.Offsets
	from    schemas.Offsets
	arena   int // bytes of the previous batch, to size the next one
}

// filesAtOnce is how many files a source reads in turn, a batch from each, so that their
// partitions spread over the lanes and are decoded in parallel.
const filesAtOnce = 8

// openFile is a file being read.
type openFile struct {
	f      *os.File
	lr     *lineReader
	name   string
	source string
	mtime  time.Time
}

func newSource(path string, schema *schemas.Schema, format readFormat, errOut *component.ErrorOutput) *source {
	s := &source{path: path, schema: schema, format: format, errOut: errOut, maxLine: MaxLineBytes}
	s.pool.New = func() any { return format.newDecoder() }
	return s
}

// Open lists the files of the path (those present now; files that appear later are not
// read) and prepares to read each from its offset in from, or from its start.
func (s *source) Open(_ context.Context, from schemas.Offsets) error {
	if err := s.Close(); err != nil {
		return err
	}
	files, err := listFiles(s.path)
	if err != nil {
		return err
	}
	s.files, s.next, s.from = files, 0, from
	s.offsets = schemas.Offsets{}
	for _, name := range files {
		if off, ok := from.Get(sourceName(name), 0); ok {
			s.offsets.Set(sourceName(name), 0, off)
		}
	}
	return nil
}

// Offsets returns the next offset of every file read so far, or resumed from.
func (s *source) Offsets() schemas.Offsets { return s.offsets.Clone() }

// Read returns the next lines of one of the open files, up to maxBatchLines, taking the
// files in turn, or io.EOF after the last file.
func (s *source) Read(ctx context.Context) (*schemas.Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for len(s.open) < filesAtOnce && s.next < len(s.files) {
			if err := s.openNext(s.files[s.next]); err != nil {
				return nil, err
			}
			s.next++
		}
		if len(s.open) == 0 {
			return nil, io.EOF
		}
		i := s.turn % len(s.open)
		cur := s.open[i]
		b, err := s.readBatch(cur)
		if err != nil && err != io.EOF {
			return nil, err
		}
		s.offsets.Set(cur.source, 0, cur.lr.off)
		if b != nil {
			s.turn++
			return b, nil
		}
		s.open = append(s.open[:i], s.open[i+1:]...)
		if err := cur.f.Close(); err != nil {
			return nil, fmt.Errorf("close %s: %w", cur.name, err)
		}
	}
}

// openNext opens name and seeks to the offset to resume from, checking that the offset is at a
// line start of a file at least that long: otherwise the file changed since the checkpoint.
func (s *source) openNext(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", name, err)
	}
	src := sourceName(name)
	off, _ := s.from.Get(src, 0)
	if err := checkResume(f, name, off, info.Size()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("seek %s to offset %d: %w", name, off, err)
	}
	lr := newLineReader(f, off, readBufferBytes, s.maxLine)
	s.open = append(s.open, &openFile{f: f, lr: lr, name: name, source: src, mtime: info.ModTime().UTC()})
	s.offsets.Set(src, 0, off)
	return nil
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

// readBatch reads the next lines of the current file. It returns a nil batch when the file
// has no more records; io.EOF comes with the file's last batch or with nil.
func (s *source) readBatch(cur *openFile) (*schemas.Batch, error) {
	data := make([]byte, 0, max(s.arena, 4096))
	var ends []int
	var pos []schemas.Position
	var err error
	for len(ends) < maxBatchLines && len(data) < maxBatchBytes {
		var line []byte
		var start int64
		line, start, err = cur.lr.next()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				err = fmt.Errorf("%s at offset %d: %w", cur.name, start, err)
			} else if err != io.EOF {
				err = fmt.Errorf("read %s: %w", cur.name, err)
			}
			break
		}
		if s.format.skip(line) {
			continue
		}
		data = append(data, line...)
		ends = append(ends, len(data))
		pos = append(pos, schemas.Position{Source: cur.source, Offset: start})
	}
	if len(ends) == 0 || (err != nil && err != io.EOF) {
		return nil, err
	}
	s.arena = len(data)
	b := &schemas.Batch{Schema: s.schema, Raw: make([][]byte, len(ends)), Pos: pos, Time: make([]time.Time, len(ends))}
	begin := 0
	for i, end := range ends {
		b.Raw[i] = data[begin:end:end]
		b.Time[i] = cur.mtime
		begin = end
	}
	return b, err
}

// Decode turns lines into rows on the Main output; lines that fail go to the error output,
// or stop the pipeline at their position when there is none.
func (s *source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	dec := s.pool.Get().(lineDecoder)
	defer s.pool.Put(dec)
	return component.DecodeBatch(b, s.schema, s.errOut, emit, func(_ int, line []byte) (schemas.Row, error) {
		return dec(line)
	})
}

// Close closes the files being read.
func (s *source) Close() error {
	var errs []error
	for _, f := range s.open {
		errs = append(errs, f.f.Close())
	}
	s.open = nil
	return errors.Join(errs...)
}

// Identity is what the source's offsets belong to: the files it reads.
func (s *source) Identity() []string { return []string{"files " + s.path} }
