package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// writeFormat is what distinguishes the writers: the files' extension and how rows become
// a file.
type writeFormat struct {
	// ext is the extension of lane files.
	ext string
	// newEncoder starts a file of rows of schema s (the sink's input) on w.
	newEncoder func(w io.Writer, s *schemas.Schema) (fileEncoder, error)
}

// fileEncoder writes the rows of one lane file.
type fileEncoder interface {
	// encode writes the rows of b, whose schema is s.
	encode(b *schemas.Batch, s *schemas.Schema) error
	// finish writes what ends the file (a footer) and whatever is still buffered.
	finish() error
}

// atRecord adds the position of record i of b to err, for messages.
func atRecord(b *schemas.Batch, i int, err error) error {
	if i < len(b.Pos) {
		return fmt.Errorf("%w (record at %s)", err, b.Pos[i])
	}
	return err
}

// sink writes an output directory one epoch directory at a time (docs/files.md): lanes write
// their rows into files of a hidden directory per epoch, and Commit adds the checkpoint and
// renames the directory to its committed name.
type sink struct {
	dir    string
	what   string // the component, for messages
	format writeFormat
	schema *schemas.Schema // the input schema, for batches that carry none
	// numShards, when not 0, is how many files an epoch has: lanes share them (shards.go).
	numShards int
	shards    shardFiles

	commitMu sync.Mutex // serializes Open, Commit and Close

	filesWritten, bytesWritten atomic.Int64 // data files finished this run (component.Measured)

	mu       sync.Mutex // guards the fields below; never held across I/O
	pipeline string
	opened   bool
	lanes    int            // SinkInfo.Lanes
	last     uint64         // the highest committed epoch
	pending  map[uint64]int // epoch -> lane files flushed for it and not committed yet
	writers  map[int]*laneWriter

	// hook, when set (tests), is called at each step of Commit; an error stops the commit
	// there, as a crash would.
	hook func(step string) error
}

// The steps of Commit at which sink.hook is called.
const (
	stepBegin      = "begin"      // nothing written yet
	stepCheckpoint = "checkpoint" // _checkpoint.json written and synced in the hidden directory
	stepRename     = "rename"     // the hidden directory synced, not renamed yet
	stepRenamed    = "renamed"    // renamed, the output directory not synced yet
)

func newSink(cfg *WriteConfig, what string, format writeFormat, schema *schemas.Schema) *sink {
	return &sink{dir: cfg.Path, what: what, format: format, schema: schema, numShards: cfg.NumShards}
}

// Summary says where the sink wrote, for the end of a run.
func (s *sink) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("committed through epoch %d in %s", s.last, s.dir)
}

// openDirs holds the output directories open in this process, so that two sinks of one
// pipeline cannot write the same directory.
var openDirs sync.Map // absolute path -> *sink

func (s *sink) claim() error {
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return fmt.Errorf("output directory %s: %w", s.dir, err)
	}
	if other, loaded := openDirs.LoadOrStore(abs, s); loaded && other != s {
		return fmt.Errorf("output directory %s is already written by another %s of this process: give each sink its own path", s.dir, other.(*sink).what)
	}
	return nil
}

func (s *sink) release() {
	if abs, err := filepath.Abs(s.dir); err == nil {
		openDirs.CompareAndDelete(abs, s)
	}
}

// Open creates the output directory if needed, removes epochs that a crash left unfinished
// and returns the checkpoint of the last committed epoch.
func (s *sink) Open(_ context.Context, info component.SinkInfo) (*component.Checkpoint, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.claim(); err != nil {
		return nil, err
	}
	cp, err := s.open(info)
	if err != nil {
		s.release()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pipeline, s.opened, s.lanes = info.Pipeline, true, info.Lanes
	s.pending = map[uint64]int{}
	s.last = 0
	if cp != nil {
		s.last = cp.Epoch
	}
	return cp, nil
}

func (s *sink) open(info component.SinkInfo) (*component.Checkpoint, error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory %s: %w", s.dir, err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.dir, err)
	}
	for _, e := range entries {
		if isTmpName(e.Name()) {
			if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
				return nil, fmt.Errorf("remove an unfinished epoch: %w", err)
			}
		}
	}
	epochs, err := committedEpochs(s.dir)
	if err != nil || len(epochs) == 0 {
		return nil, err
	}
	last := epochs[len(epochs)-1]
	edir := filepath.Join(s.dir, epochName(last))
	cp, err := readCheckpoint(edir)
	switch {
	case notExist(err):
		return nil, fmt.Errorf("%s %w: it was not written by sluice, or was damaged; choose a new path", edir, errNoCheckpoint)
	case err != nil:
		return nil, err
	case cp.Epoch != last:
		return nil, fmt.Errorf("%s holds the checkpoint of epoch %d: it was damaged; choose a new path", edir, cp.Epoch)
	case cp.Pipeline != info.Pipeline:
		return nil, fmt.Errorf("%s %s holds the output of pipeline %q, not of %q: resuming it would mix two pipelines' offsets; choose a new path (or remove the directory to start over)",
			s.what, s.dir, cp.Pipeline, info.Pipeline)
	}
	return cp, nil
}

// Writer returns the writer of a lane.
func (s *sink) Writer(lane int) component.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writers == nil {
		s.writers = map[int]*laneWriter{}
	}
	w := s.writers[lane]
	if w == nil {
		w = &laneWriter{s: s, lane: lane, flushed: s.last}
		s.writers[lane] = w
	}
	if s.numShards > 0 {
		return &shardWriter{lw: w}
	}
	return w
}

// Commit makes the epoch's lane files visible together with cp, by renaming the epoch's
// hidden directory. An epoch already committed with offsets that cover cp's is left as it is.
func (s *sink) Commit(_ context.Context, cp component.Commit) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	opened, last, pipeline := s.opened, s.last, s.pipeline
	var unfinished []uint64
	for e, n := range s.pending {
		if e < cp.Epoch && e > last && n > 0 {
			unfinished = append(unfinished, e)
		}
	}
	s.mu.Unlock()
	if !opened {
		return fmt.Errorf("%s %s: commit before open", s.what, s.dir)
	}
	if cp.Pipeline != pipeline {
		return fmt.Errorf("%s %s: commit for pipeline %q, opened for %q", s.what, s.dir, cp.Pipeline, pipeline)
	}
	final := filepath.Join(s.dir, epochName(cp.Epoch))
	tmp := filepath.Join(s.dir, tmpName(cp.Epoch))
	done, err := s.committed(final, cp.Checkpoint)
	if err != nil || done {
		if done {
			// A re-run of a committed epoch writes nothing new: the runner drops the records
			// the checkpoint covers. Its hidden directory can go.
			err = os.RemoveAll(tmp)
			s.committedUpTo(cp.Epoch)
		}
		return err
	}
	if cp.Epoch <= last {
		return fmt.Errorf("%s %s: epoch %d is not after the last committed epoch %d", s.what, s.dir, cp.Epoch, last)
	}
	if len(unfinished) > 0 {
		return fmt.Errorf("%s %s: epoch %d has flushed rows but was not committed before epoch %d", s.what, s.dir, unfinished[0], cp.Epoch)
	}
	if err := s.step(stepBegin); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("commit epoch %d: %w", cp.Epoch, err)
	}
	data, err := json.MarshalIndent(cp.Checkpoint, "", "  ")
	if err != nil {
		return fmt.Errorf("commit epoch %d to %s: %w", cp.Epoch, s.dir, err)
	}
	if err := writeFileSync(filepath.Join(tmp, checkpointFile), append(data, '\n')); err != nil {
		return fmt.Errorf("commit epoch %d: %w", cp.Epoch, err)
	}
	if err := s.step(stepCheckpoint); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("commit epoch %d: %w", cp.Epoch, err)
	}
	if err := s.step(stepRename); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("commit epoch %d: %w", cp.Epoch, err)
	}
	if err := s.step(stepRenamed); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("commit epoch %d: %w", cp.Epoch, err)
	}
	s.committedUpTo(cp.Epoch)
	return nil
}

// committed reports whether final already holds a commit that covers cp (a repeated
// Commit), and fails when it holds a different one.
func (s *sink) committed(final string, cp component.Checkpoint) (bool, error) {
	existing, err := readCheckpoint(final)
	switch {
	case notExist(err):
		if _, serr := os.Stat(final); serr == nil {
			return false, fmt.Errorf("%s %w: it was not written by sluice, or was damaged; choose a new path", final, errNoCheckpoint)
		}
		return false, nil
	case err != nil:
		return false, err
	case existing.Pipeline == cp.Pipeline && existing.Next.Includes(cp.Next):
		return true, nil
	}
	return false, fmt.Errorf("%s %s: epoch %d is already committed with other offsets; epochs must be numbered after the restored checkpoint's", s.what, s.dir, cp.Epoch)
}

func (s *sink) committedUpTo(epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = max(s.last, epoch)
	for e := range s.pending {
		if e <= epoch {
			delete(s.pending, e)
		}
	}
}

func (s *sink) step(name string) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(name)
}

// flushed records that a lane file of epoch is complete.
func (s *sink) flushed(epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[uint64]int{}
	}
	s.pending[epoch]++
}

// Close closes the lane files still open without committing them: what they hold was never
// committed, and the next Open removes it.
func (s *sink) Close(context.Context) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	writers := s.writers
	s.writers, s.opened = nil, false
	s.mu.Unlock()
	var errs []error
	for _, w := range writers {
		errs = append(errs, w.close())
	}
	errs = append(errs, s.shards.close())
	s.release()
	return errors.Join(errs...)
}

// laneWriter writes one lane's rows into its file of the current epoch.
type laneWriter struct {
	s       *sink
	lane    int
	flushed uint64 // the last epoch this lane flushed
	epoch   uint64 // the epoch the open file was created for: flushed+1, the runner's next
	f       *os.File
	enc     fileEncoder
	name    string
	closed  bool
}

// Write appends the rows of b to the lane's file of the current epoch, creating it first.
func (w *laneWriter) Write(_ context.Context, b *schemas.Batch) error {
	if len(b.Rows) == 0 {
		return nil
	}
	if w.f == nil {
		if err := w.create(); err != nil {
			return err
		}
	}
	schema := b.Schema
	if schema == nil {
		schema = w.s.schema
	}
	if err := w.enc.encode(b, schema); err != nil {
		return fmt.Errorf("%s %s: %w", w.s.what, w.s.dir, err)
	}
	return nil
}

// create opens the lane's file in the hidden directory of the epoch after the last one it
// flushed; Flush moves it if the runner's epoch turns out to be another.
func (w *laneWriter) create() error {
	if w.closed {
		return fmt.Errorf("%s %s: write after close", w.s.what, w.s.dir)
	}
	w.epoch = w.flushed + 1
	f, enc, err := w.s.createFile(w.epoch, laneName(w.lane, w.s.format.ext))
	if err != nil {
		return err
	}
	w.f, w.enc, w.name = f, enc, f.Name()
	return nil
}

// createFile creates a data file of epoch in its hidden directory and starts its encoder.
func (s *sink) createFile(epoch uint64, base string) (*os.File, fileEncoder, error) {
	dir := filepath.Join(s.dir, tmpName(epoch))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.what, err)
	}
	name := filepath.Join(dir, base)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: create a data file: %w (is another process writing %s?)", s.what, err, s.dir)
	}
	enc, err := s.format.newEncoder(fileOnly{f}, s.schema)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s %s: %w", s.what, name, err)
	}
	return f, enc, nil
}

// finishFile ends a data file: its encoder's footer, then sync and close.
func (s *sink) finishFile(f *os.File, enc fileEncoder) error {
	if err := enc.finish(); err != nil {
		f.Close()
		return fmt.Errorf("%s %s: %w", s.what, f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if st, err := f.Stat(); err == nil {
		s.filesWritten.Add(1)
		s.bytesWritten.Add(st.Size())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	return nil
}

// moveFile puts a data file into the hidden directory of epoch, returning its new name.
func (s *sink) moveFile(name string, epoch uint64) (string, error) {
	dir := filepath.Join(s.dir, tmpName(epoch))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", s.what, err)
	}
	to := filepath.Join(dir, filepath.Base(name))
	if err := os.Rename(name, to); err != nil {
		return "", fmt.Errorf("%s: %w", s.what, err)
	}
	return to, nil
}

// Flush ends the lane's part of epoch: its file, if it has rows, is synced, closed and
// recorded for the epoch's commit.
func (w *laneWriter) Flush(_ context.Context, epoch uint64) error {
	if epoch == w.flushed && w.f == nil {
		return nil // a repeated Flush
	}
	if epoch <= w.flushed {
		return fmt.Errorf("%s %s: lane %d flushes epoch %d after epoch %d", w.s.what, w.s.dir, w.lane, epoch, w.flushed)
	}
	if w.f != nil {
		err := w.s.finishFile(w.f, w.enc)
		w.f, w.enc = nil, nil
		if err != nil {
			return err
		}
		if epoch != w.epoch {
			if w.name, err = w.s.moveFile(w.name, epoch); err != nil {
				return err
			}
			w.epoch = epoch
		}
		w.s.flushed(epoch)
	}
	w.flushed = epoch
	return nil
}

func (w *laneWriter) close() error {
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f, w.enc = nil, nil
	return err
}

// fileOnly hides the Close of a lane file from encoders whose own Close would close their
// writer: the lane writer syncs and closes the file itself.
type fileOnly struct{ f *os.File }

func (w fileOnly) Write(p []byte) (int, error) { return w.f.Write(p) }

// Identity is what the sink writes: its directory.
func (s *sink) Identity() []string { return []string{"files " + s.dir} }

// Written implements component.Measured: the data files finished this run and their sizes,
// committed or not yet.
func (s *sink) Written() (files, bytes int64) { return s.filesWritten.Load(), s.bytesWritten.Load() }
