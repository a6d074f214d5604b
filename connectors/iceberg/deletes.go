package iceberg

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// sealChanges records the changes a lane flushed for epoch into ts.
func (s *sink) sealChanges(ts *tableState, epoch uint64, ch *changes) {
	if len(ch.keys) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts.changes[epoch] = append(ts.changes[epoch], *ch)
}

// pendingChanges merges the changes sealed in ts for the epochs up to epoch: a later epoch's
// change of a key wins over an earlier one's. Within an epoch the lanes' changes are merged
// in the order the lanes flushed, which matters only for a key read from several partitions.
// They are merged into the first (no copy of its map) and kept as epoch's only changes, so
// that a commit tried again merges nothing twice.
func (s *sink) pendingChanges(ts *tableState, epoch uint64) *changes {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out *changes
	for _, e := range slices.Sorted(maps.Keys(ts.changes)) {
		if e > epoch {
			continue
		}
		for i := range ts.changes[e] {
			if out == nil {
				out = &ts.changes[e][i]
			} else {
				out.merge(&ts.changes[e][i])
			}
		}
		delete(ts.changes, e)
	}
	if out == nil {
		return newChanges()
	}
	ts.changes[epoch] = []changes{*out}
	return out
}

// writeChanges writes what an upsert commit needs besides files, the data files the lanes
// wrote and sealed for it: the newest rows still held in converted batches (a partitioned
// table's) into data files (iceberg-go's record writer, as appends), the rows of files that
// later changes of their keys superseded into a position delete file, and every changed key
// into equality delete files on the key columns (iceberg-go's Transaction.WriteEqualityDeletes).
// It returns the commit's data files (files and the new ones) and delete files. In one
// snapshot the equality deletes apply to the rows of earlier snapshots only (their data
// sequence number is the snapshot's, and an equality delete applies to data files of a lower
// one), so the new rows survive them; the position deletes apply to the snapshot's own files.
func (s *sink) writeChanges(ctx context.Context, ts *tableState, tbl *table.Table, files []iceberg.DataFile, ch *changes) (data, deletes []iceberg.DataFile, err error) {
	if len(ch.keys) == 0 {
		return files, nil, nil
	}
	up := s.plan.upsert
	keys := make([]schemas.Row, 0, len(ch.keys))
	live := make(map[*converted][]bool, len(ch.batches))
	for k, c := range ch.keys {
		key, ok := ch.values[k]
		if !ok {
			if key, ok = keyValues(k, len(up.key)); !ok {
				return nil, nil, fmt.Errorf("the key %q has no values", k)
			}
		}
		keys = append(keys, key)
		if c.at != nil && c.at.batch != nil {
			mask := live[c.at.batch]
			if mask == nil {
				mask = make([]bool, c.at.batch.rec.NumRows())
				live[c.at.batch] = mask
			}
			mask[c.pos] = true
		}
	}
	wr := ts.wr.Load()
	if len(ch.dead) > 0 {
		pos, err := writePosDeletes(ctx, wr.tbl, ch.dead)
		if err != nil {
			return nil, nil, fmt.Errorf("writing the position delete file: %w", err)
		}
		deletes = append(deletes, pos)
	}
	if len(live) > 0 {
		for df, err := range table.WriteRecords(ctx, wr.tbl, wr.conv.Schema(), newestRows(ctx, ch.batches, live), table.WithMaxWriteWorkers(1)) {
			if err != nil {
				return nil, nil, fmt.Errorf("writing data files: %w", err)
			}
			data = append(data, df)
		}
	}
	sc := tbl.Schema()
	delSchema, err := sc.Select(true, up.key...)
	if err != nil {
		return nil, nil, fmt.Errorf("the key columns: %w", err)
	}
	ids := make([]int, len(up.key))
	for i, name := range up.key {
		f, _ := sc.FindFieldByName(name)
		ids[i] = f.ID
	}
	arrowSc, err := table.SchemaToArrowSchema(delSchema, nil, true, false)
	if err != nil {
		return nil, nil, fmt.Errorf("the key columns' Arrow schema: %w", err)
	}
	conv, err := newConverter(arrowSc, func(name string) func(schemas.Row) any {
		k := slices.Index(up.key, name)
		if k < 0 {
			return nil
		}
		return func(key schemas.Row) any { return key[k] }
	})
	if err != nil {
		return nil, nil, err
	}
	// A transaction of wr.tbl only to write the files (with sluice's file sizes); the commit
	// is a transaction of its own, which may be rebuilt on a newer table.
	eq, err := wr.tbl.NewTransaction().WriteEqualityDeletes(ctx, ids, records(conv, keys))
	if err != nil {
		return nil, nil, fmt.Errorf("writing equality delete files: %w", err)
	}
	deletes = append(deletes, eq...)
	for _, df := range slices.Concat(data, deletes) { // the files written here
		s.filesWritten.Add(1)
		s.bytesWritten.Add(df.FileSizeBytes())
	}
	return slices.Concat(files, data), deletes, nil
}

// newestRows yields, in the order they were written, the rows of batches that live marks as
// the newest of their keys: a batch whole when all its rows are (the commit retains it: the
// record writer releases what it takes), else the rows filtered into a new record.
func newestRows(ctx context.Context, batches []*converted, live map[*converted][]bool) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var mask *array.BooleanBuilder
		for _, b := range batches {
			rows := live[b]
			n := 0
			for _, ok := range rows {
				if ok {
					n++
				}
			}
			var rec arrow.RecordBatch
			switch {
			case n == 0:
				continue
			case n == len(rows):
				b.rec.Retain()
				rec = b.rec
			default:
				if mask == nil {
					mask = array.NewBooleanBuilder(memory.DefaultAllocator)
					defer mask.Release()
				}
				mask.AppendValues(rows, nil)
				filter := mask.NewArray()
				var err error
				rec, err = compute.FilterRecordBatch(ctx, b.rec, filter, compute.DefaultFilterOptions())
				filter.Release()
				if err != nil {
					yield(nil, fmt.Errorf("selecting the newest rows: %w", err))
					return
				}
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// recordRows is how many rows go into one Arrow record of a commit's rows or keys, so that
// iceberg-go can roll files between records.
const recordRows = 8192

// records converts rows into Arrow records of recordRows rows, lazily; the consumer releases
// them (iceberg-go's writers do).
func records(conv *converter, rows []schemas.Row) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for chunk := range slices.Chunk(rows, recordRows) {
			rec, err := conv.Record(chunk, nil)
			if err != nil {
				yield(nil, fmt.Errorf("converting rows: %w", err))
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// stageRowDelta stages data files and equality delete files in txn as one snapshot with the
// summary props: iceberg-go's RowDelta (an overwrite snapshot, or a delete one without data).
// Its position deletes name only the snapshot's own new files, which the summary says
// (keyOwnPosDeletes).
func stageRowDelta(ctx context.Context, txn *table.Transaction, data, deletes []iceberg.DataFile, props iceberg.Properties) error {
	own := 0
	for _, df := range deletes {
		if df.ContentType() == iceberg.EntryContentPosDeletes {
			own++
		}
	}
	if own > 0 {
		props[keyOwnPosDeletes] = strconv.Itoa(own)
	}
	return txn.NewRowDelta(props).AddRows(data...).AddDeletes(deletes...).Commit(ctx)
}
