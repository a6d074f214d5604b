package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// batchRows is the most rows a batch of the read sources holds.
const batchRows = 2048

// fileScan reads the data files of one scan in a fixed order (by path), numbering the rows
// from 0 in that order, so that a row's index is the same on every run over the same files:
// the position of row idx is Offset base+idx of the partition. Rows below skip were
// delivered before and are not returned again.
type fileScan struct {
	scan   *table.Scan // projection and batch size for ReadTasks
	tasks  []table.FileScanTask
	source string
	part   int32
	base   int64
	skip   int64
	at     time.Time // the rows' event time: when their snapshot was committed
	rows   *rowReader

	i    int   // the task being read
	idx  int64 // the index of the next row
	next func() (arrow.RecordBatch, error, bool)
	stop func()
}

// newFileScan prepares reading tasks, sorted by path, with scan's projection.
func newFileScan(scan *table.Scan, tasks []table.FileScanTask, rows *rowReader) *fileScan {
	slices.SortFunc(tasks, func(a, b table.FileScanTask) int { return cmp.Compare(a.File.FilePath(), b.File.FilePath()) })
	return &fileScan{scan: scan, tasks: tasks, rows: rows}
}

// hasDeletes reports whether reading the task drops rows of its file, so that the file's
// record count is not its number of rows.
func hasDeletes(t table.FileScanTask) bool {
	return len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0
}

// read returns the next rows, with positions, or io.EOF after the last file. ctx bounds the
// reading of the files, which goes on across calls: it is the source's, not one Read's.
func (f *fileScan) read(ctx context.Context) (*schemas.Batch, error) {
	for {
		if f.next == nil {
			if f.i >= len(f.tasks) {
				return nil, io.EOF
			}
			task := f.tasks[f.i]
			if !hasDeletes(task) && f.idx+task.File.Count() <= f.skip { // delivered: not read again
				f.idx += task.File.Count()
				f.i++
				continue
			}
			_, seq, err := f.scan.ReadTasks(ctx, []table.FileScanTask{task})
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", task.File.FilePath(), err)
			}
			f.next, f.stop = iter.Pull2(seq)
		}
		rec, err, ok := f.next()
		if !ok {
			f.close()
			f.i++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.tasks[f.i].File.FilePath(), err)
		}
		b, err := f.batch(rec)
		rec.Release()
		if err != nil || b != nil {
			return b, err
		}
	}
}

// batch turns a record into the rows not delivered yet, or nil when there are none.
func (f *fileScan) batch(rec arrow.RecordBatch) (*schemas.Batch, error) {
	n := int(rec.NumRows())
	from := int(min(int64(n), max(0, f.skip-f.idx)))
	first := f.idx + int64(from)
	f.idx += int64(n)
	if from == n {
		return nil, nil
	}
	rows, err := f.rows.Read(rec, from, n, make([]schemas.Row, 0, n-from))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.tasks[f.i].File.FilePath(), err)
	}
	b := &schemas.Batch{Schema: f.rows.Schema(), Rows: rows, Pos: make([]schemas.Position, len(rows)), Time: make([]time.Time, len(rows))}
	for k := range rows {
		b.Pos[k] = schemas.Position{Source: f.source, Partition: f.part, Offset: f.base + first + int64(k)}
		b.Time[k] = f.at
	}
	return b, nil
}

// rowCount is the number of rows of the files, when reading applies no deletes.
func (f *fileScan) rowCount() int64 {
	var n int64
	for _, t := range f.tasks {
		n += t.File.Count()
	}
	return n
}

// close stops reading the current file.
func (f *fileScan) close() {
	if f.stop != nil {
		f.stop()
	}
	f.next, f.stop = nil, nil
}
