package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/sluicehq/sluice/schemas"
)

// With num_shards, the lanes share an epoch's files: lane L writes shard L mod num_shards,
// so an epoch has at most num_shards files, shard-<K>-of-<N>.<ext>. A shard's file of an
// epoch is finished when every lane that writes it has flushed that epoch; until then the
// lanes that flushed already write their next epoch into the next file of the shard.

// shardFiles holds the open files of the shards, keyed by shard and the epoch their lanes
// guessed (the lanes' last flushed epoch + 1; Flush moves a file when the runner's epoch is
// another, as for lane files).
type shardFiles struct {
	mu    sync.Mutex
	files map[shardKey]*shardFile
}

type shardKey struct {
	shard int
	guess uint64
}

// shardFile is one shard's file of one epoch, and how many of its lanes flushed it.
type shardFile struct {
	f       *os.File
	enc     fileEncoder
	flushes int
}

// shardWriter is a lane's writer when lanes share files.
type shardWriter struct{ lw *laneWriter }

func (w *shardWriter) key() shardKey {
	return shardKey{shard: w.lw.lane % w.lw.s.numShards, guess: w.lw.flushed + 1}
}

// lanesOf returns how many lanes write shard k.
func (s *sink) lanesOf(k int) int {
	s.mu.Lock()
	lanes := s.lanes
	s.mu.Unlock()
	n := 0
	for l := k; l < lanes; l += s.numShards {
		n++
	}
	return max(n, 1)
}

// entry returns the shard file of key, creating the entry (without a file) if needed. The
// caller holds sf.mu.
func (sf *shardFiles) entry(key shardKey) *shardFile {
	if sf.files == nil {
		sf.files = map[shardKey]*shardFile{}
	}
	e := sf.files[key]
	if e == nil {
		e = &shardFile{}
		sf.files[key] = e
	}
	return e
}

// Write encodes the rows of b into the lane's shard file of its next epoch.
func (w *shardWriter) Write(_ context.Context, b *schemas.Batch) error {
	if len(b.Rows) == 0 {
		return nil
	}
	s := w.lw.s
	if w.lw.closed {
		return fmt.Errorf("%s %s: write after close", s.what, s.dir)
	}
	schema := b.Schema
	if schema == nil {
		schema = s.schema
	}
	key := w.key()
	s.shards.mu.Lock()
	defer s.shards.mu.Unlock()
	e := s.shards.entry(key)
	if e.f == nil {
		name := fmt.Sprintf("shard-%d-of-%d%s", key.shard, s.numShards, s.format.ext)
		f, enc, err := s.createFile(key.guess, name)
		if err != nil {
			return err
		}
		e.f, e.enc = f, enc
	}
	if err := e.enc.encode(b, schema); err != nil {
		return fmt.Errorf("%s %s: %w", s.what, s.dir, err)
	}
	return nil
}

// Flush records that the lane is done with epoch; the last lane of the shard to flush it
// finishes the shard's file and records it for the epoch's commit.
func (w *shardWriter) Flush(_ context.Context, epoch uint64) error {
	lw, s := w.lw, w.lw.s
	if epoch == lw.flushed {
		return nil // a repeated Flush
	}
	if epoch < lw.flushed {
		return fmt.Errorf("%s %s: lane %d flushes epoch %d after epoch %d", s.what, s.dir, lw.lane, epoch, lw.flushed)
	}
	key := w.key()
	lanes := s.lanesOf(key.shard)
	s.shards.mu.Lock()
	defer s.shards.mu.Unlock()
	e := s.shards.entry(key)
	e.flushes++
	lw.flushed = epoch
	if e.flushes < lanes {
		return nil
	}
	delete(s.shards.files, key)
	if e.f == nil {
		return nil
	}
	name := e.f.Name()
	if err := s.finishFile(e.f, e.enc); err != nil {
		return err
	}
	if epoch != key.guess {
		if _, err := s.moveFile(name, epoch); err != nil {
			return err
		}
	}
	s.flushed(epoch)
	return nil
}

// close closes the shard files still open without committing them.
func (sf *shardFiles) close() error {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	var errs []error
	for k, e := range sf.files {
		if e.f != nil {
			errs = append(errs, e.f.Close())
		}
		delete(sf.files, k)
	}
	return errors.Join(errs...)
}
