package iceberg

import (
	"context"
	"sync"
)

// sharedRuns are the runs of a partitioned table's record writer that every lane feeds, one
// per epoch: iceberg-go's writer splits the records by partition and keeps one open file per
// partition, so an epoch gets one file per partition instead of one per lane and partition
// (issue 21: 256 files of 0.1 MiB per run with two lanes and 64 buckets). The partitions'
// files are written by goroutines of their own, so the lanes still encode in parallel. An
// unpartitioned table keeps a run per lane: one shared file would put its Parquet encoding on
// one core. A run is a segment of iceberg-go's writer, or the partitions' files of the direct
// path (parquetpart.go). The zero value is ready to use.
type sharedRuns[R interface{ stop() }] struct {
	mu      sync.Mutex
	runs    map[uint64]R            // by epoch
	flushed map[uint64]map[int]bool // by epoch: the lanes that flushed it
}

// run returns the run of epoch, starting it if needed. flushed gives the lanes that flushed
// epoch already: a table routed to for the first time may get rows of an epoch that some lane
// flushed before the table existed, and that lane's flush must count for it.
func (r *sharedRuns[R]) run(epoch uint64, flushed func(epoch uint64) []int, start func() R) R {
	r.mu.Lock()
	seg, ok := r.runs[epoch]
	r.mu.Unlock()
	if ok {
		return seg
	}
	early := flushed(epoch)
	r.mu.Lock()
	defer r.mu.Unlock()
	if seg, ok = r.runs[epoch]; !ok {
		if r.runs == nil {
			r.runs = map[uint64]R{}
		}
		seg = start()
		r.runs[epoch] = seg
	}
	for _, lane := range early {
		r.mark(epoch, lane)
	}
	return seg
}

// mark records that lane flushed epoch and returns the lanes that did; under r.mu.
func (r *sharedRuns[R]) mark(epoch uint64, lane int) map[int]bool {
	if r.flushed == nil {
		r.flushed = map[uint64]map[int]bool{}
	}
	set := r.flushed[epoch]
	if set == nil {
		set = map[int]bool{}
		r.flushed[epoch] = set
	}
	set[lane] = true
	return set
}

// sharedWorkers is how many goroutines of iceberg-go's writer split a shared run's records by
// partition (the files are written by one goroutine per partition besides).
const sharedWorkers = 2

// flush records that lane flushed epoch. When it is the last of lanes to do so, it returns the
// epoch's run (the zero R when no lane wrote in it) and done: that lane ends the run.
func (r *sharedRuns[R]) flush(epoch uint64, lane, lanes int) (seg R, done bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.mark(epoch, lane)) < lanes {
		return seg, false
	}
	seg = r.runs[epoch]
	delete(r.runs, epoch)
	delete(r.flushed, epoch)
	return seg, true
}

// abort stops every run; their files are never committed.
func (r *sharedRuns[R]) abort() {
	r.mu.Lock()
	runs := r.runs
	r.runs, r.flushed = nil, nil
	r.mu.Unlock()
	for _, seg := range runs {
		seg.stop()
	}
}

// end closes the input of seg and waits for its files, or stops it when ctx ends first.
func (seg *segment) end(ctx context.Context) error {
	close(seg.in)
	select {
	case <-seg.done:
		return nil
	case <-ctx.Done():
		seg.cancel()
		<-seg.done
		return ctx.Err()
	}
}

// stop cancels seg, closes its input and waits for its end.
func (seg *segment) stop() {
	seg.cancel()
	close(seg.in)
	<-seg.done
}

// partitioned reports whether the table has a partition spec, whose runs the lanes share.
func (wr *writing) partitioned() bool { return !wr.tbl.Spec().IsUnpartitioned() }
