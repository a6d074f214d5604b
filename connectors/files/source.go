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

// recordDecoder turns the bytes of record i of a raw batch into a row. One goroutine uses it at
// a time.
type recordDecoder func(b *schemas.Batch, i int, raw []byte) (schemas.Row, error)

// fileFormat is what distinguishes the readers: how a file's records are found, and how
// they become rows.
type fileFormat struct {
	// open returns a reader of the file's records from offset off, checking that off is a
	// place the format can resume at.
	open func(f *os.File, name string, size, off int64) (records, error)
	// newDecoder returns a decoder for one goroutine; nil for formats whose records come out
	// of open's reader as rows.
	newDecoder func() recordDecoder
}

// records reads the records of one file in order.
type records interface {
	// next returns the next record, or io.EOF after the last. Its bytes are valid until the
	// next call.
	next() (record, error)
	// offset is where the record after the last one returned starts: the offset to resume
	// from.
	offset() int64
}

// record is one record of a file: its bytes (decoded in the lanes) or its row (formats
// decoded while reading), where it starts, and its line (1-based; 0 for formats without
// lines).
type record struct {
	raw   []byte
	row   schemas.Row
	start int64
	line  int
}

// batchMeta is a raw batch's Meta: the file its records come from and their lines, for
// messages that name a record's place (CSV).
type batchMeta struct {
	file  string
	lines []int
	// state is what a format's reader tells its decoder about the file (stateful): CSV's
	// columns, Avro's writer schema.
	state any
}

// stateful is implemented by the readers of formats whose records decode by something of
// their file (CSV's header, Avro's writer schema).
type stateful interface{ fileState() any }

// source reads the files of a path, each file a partition of its own. Read and Offsets run
// on one goroutine; Decode runs on many.
type source struct {
	path   string
	schema *schemas.Schema
	format fileFormat
	errOut *component.ErrorOutput
	pool   sync.Pool // of recordDecoder

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
	recs   records
	name   string
	source string
	mtime  time.Time
}

func newSource(path string, schema *schemas.Schema, format fileFormat, errOut *component.ErrorOutput) *source {
	s := &source{path: path, schema: schema, format: format, errOut: errOut}
	if format.newDecoder != nil {
		s.pool.New = func() any { return format.newDecoder() }
	}
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
		s.offsets.Set(cur.source, 0, cur.recs.offset())
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

// openNext opens name at the offset to resume from; the format checks that the file can be
// resumed there (it did not change since the checkpoint).
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
	recs, err := s.format.open(f, name, info.Size(), off)
	if err != nil {
		f.Close()
		return err
	}
	s.open = append(s.open, &openFile{f: f, recs: recs, name: name, source: src, mtime: info.ModTime().UTC()})
	s.offsets.Set(src, 0, off)
	return nil
}

// readBatch reads the next records of the current file. It returns a nil batch when the
// file has no more records; io.EOF comes with the file's last batch or with nil.
func (s *source) readBatch(cur *openFile) (*schemas.Batch, error) {
	data := make([]byte, 0, max(s.arena, 4096))
	var ends, lines []int
	var rows []schemas.Row
	var pos []schemas.Position
	var err error
	for len(pos) < maxBatchLines && len(data) < maxBatchBytes {
		var rec record
		if rec, err = cur.recs.next(); err != nil {
			break
		}
		if rec.row != nil {
			rows = append(rows, rec.row)
		} else {
			data = append(data, rec.raw...)
			ends = append(ends, len(data))
		}
		if rec.line > 0 {
			lines = append(lines, rec.line)
		}
		pos = append(pos, schemas.Position{Source: cur.source, Offset: rec.start})
	}
	if len(pos) == 0 || (err != nil && err != io.EOF) {
		return nil, err
	}
	b := &schemas.Batch{Schema: s.schema, Pos: pos, Time: make([]time.Time, len(pos))}
	for i := range b.Time {
		b.Time[i] = cur.mtime
	}
	if rows != nil {
		b.Rows = rows
		return b, err
	}
	s.arena = len(data)
	b.Raw = make([][]byte, len(ends))
	begin := 0
	for i, end := range ends {
		b.Raw[i] = data[begin:end:end]
		begin = end
	}
	meta := &batchMeta{file: cur.name, lines: lines}
	if c, ok := cur.recs.(stateful); ok {
		meta.state = c.fileState()
	}
	b.Meta = meta
	return b, err
}

// Decode turns records into rows on the Main output; records that fail go to the error
// output, or stop the pipeline at their position when there is none. Batches of formats
// decoded while reading pass as they are.
func (s *source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	if b.Raw == nil {
		return emit(component.Main, b)
	}
	dec := s.pool.Get().(recordDecoder)
	defer s.pool.Put(dec)
	return component.DecodeBatch(b, s.schema, s.errOut, emit, func(i int, raw []byte) (schemas.Row, error) {
		return dec(b, i, raw)
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
