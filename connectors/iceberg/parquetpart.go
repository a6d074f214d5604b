package iceberg

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/parquetrow"
)

// The rows of a partitioned table take the direct path too (parquetwrite.go) when its
// partition fields are identity, bucket, truncate or void transforms of top-level int, long or
// string columns: each row's partition is computed with iceberg-go's transforms, the rows of a
// batch are grouped by partition (no Arrow records, no take of each slice), and every lane
// writes its groups into the epoch's file of the partition, shared by the lanes as iceberg-go's
// runs are (shared.go): one file per partition and epoch. The data files carry the partition
// values and the partition's location as iceberg-go's writer gives them.

// maxPartFields bounds the partition fields the direct path covers: a partition is a partKey.
const maxPartFields = 4

// partKey is a partition's values, transformed, in the spec's order (comparable: nil, int32,
// int64 or string).
type partKey [maxPartFields]any

// partitioner computes the partitions of rows of a table.
type partitioner struct {
	spec   iceberg.PartitionSpec
	schema *iceberg.Schema
	fields []partField
	root   string // the table's location
	props  iceberg.Properties
	locs   sync.Map // partition path -> table.LocationProvider
}

// partField is one field of the spec.
type partField struct {
	id     int // the partition field's id
	column string
	get    func(schemas.Row) any
	value  func(any) (any, bool) // a row's value as iceberg-go's type of the column, or false
	apply  func(any) any         // the transform of a value not nil
}

// newPartitioner returns the partitioner of tbl's spec, or false when the direct path does not
// cover it.
func newPartitioner(tbl *table.Table, get func(string) func(schemas.Row) any) (*partitioner, bool) {
	spec, sc := tbl.Spec(), tbl.Schema()
	if spec.NumFields() > maxPartFields {
		return nil, false
	}
	p := &partitioner{spec: spec, schema: sc, root: tbl.Location(), props: tbl.Properties()}
	for _, f := range spec.Fields() {
		if len(f.SourceIDs) != 1 {
			return nil, false
		}
		var src *iceberg.NestedField
		for _, c := range sc.Fields() {
			if c.ID == f.SourceIDs[0] {
				src = &c
			}
		}
		if src == nil {
			return nil, false // a nested or dropped column
		}
		pf := partField{id: f.FieldID, column: src.Name, get: get(src.Name)}
		if pf.get == nil {
			pf.get = func(schemas.Row) any { return nil }
		}
		switch src.Type.(type) {
		case iceberg.Int64Type:
			pf.value = func(v any) (any, bool) { x, ok := v.(int64); return x, ok }
		case iceberg.Int32Type:
			pf.value = func(v any) (any, bool) {
				x, ok := v.(int64)
				return int32(x), ok && x == int64(int32(x))
			}
		case iceberg.StringType:
			pf.value = func(v any) (any, bool) { x, ok := v.(string); return x, ok }
		default:
			return nil, false
		}
		switch t := f.Transform.(type) {
		case iceberg.IdentityTransform:
			pf.apply = func(v any) any { return v }
		case iceberg.VoidTransform:
			pf.apply = func(any) any { return nil }
		case iceberg.BucketTransform:
			bucket := t.Transformer(src.Type)
			pf.apply = func(v any) any {
				if b := bucket(v); b.Valid {
					return b.Val
				}
				return nil
			}
		case iceberg.TruncateTransform:
			trunc, err := t.Transformer(src.Type)
			if err != nil {
				return nil, false
			}
			pf.apply = trunc
		default:
			return nil, false
		}
		p.fields = append(p.fields, pf)
	}
	return p, true
}

// key returns the partition of row, or a *parquetrow.RowError (Index 0) for a value that does
// not fit its column.
func (p *partitioner) key(row schemas.Row) (partKey, error) {
	var k partKey
	for i, f := range p.fields {
		v := f.get(row)
		if v == nil {
			continue
		}
		x, ok := f.value(v)
		if !ok {
			return k, &parquetrow.RowError{Column: f.column, Err: fmt.Errorf("%v (%T) does not fit the column", v, v)}
		}
		k[i] = f.apply(x)
	}
	return k, nil
}

// partRecord is a partition's values as iceberg-go's StructLike.
type partRecord []any

func (r partRecord) Size() int           { return len(r) }
func (r partRecord) Get(pos int) any     { return r[pos] }
func (r partRecord) Set(pos int, va any) { r[pos] = va }

// location returns where the files of partition k go, as iceberg-go's writer places them: the
// table's data directory, then the partition's path.
func (p *partitioner) location(k partKey) (table.LocationProvider, map[int]any, error) {
	rec := partRecord(k[:len(p.fields)])
	values := make(map[int]any, len(p.fields))
	for i, f := range p.fields {
		values[f.id] = k[i]
	}
	path := p.spec.PartitionToPath(rec, p.schema)
	if loc, ok := p.locs.Load(path); ok {
		return loc.(table.LocationProvider), values, nil
	}
	root, err := url.Parse(p.root)
	if err != nil {
		return nil, nil, err
	}
	props := maps.Clone(p.props)
	if props == nil {
		props = iceberg.Properties{}
	}
	props[table.WriteDataPathKey] = root.JoinPath("data", path).String()
	loc, err := table.LoadLocationProvider(p.root, props)
	if err != nil {
		return nil, nil, err
	}
	p.locs.Store(path, loc)
	return loc, values, nil
}

// partBufferBytes bounds what the open files of a partitioned table's epoch hold in memory
// together (parquetrow's Held: pages cut, compressed, and current pages and dictionaries):
// arrow-go's writer keeps a row group in memory until it ends, and a partition's file gets few
// rows per epoch, so without a bound the 64 files of a bucket(id, 64) table held the epoch's
// rows whole (bench, 1M records: peak RSS 580-672 MiB). Past the bound, a file that holds at
// least its share ends its row group, writing its pages out. A variable for the tests.
var partBufferBytes int64 = 32 << 20

// partPageBytes is the largest page of a partition's file: every column of every open file has
// a page being filled, uncompressed, so pages of the table's size (512 KiB by default) would
// take most of the bound above in the open pages of 64 files; smaller pages are compressed as
// they fill, and the row groups, which cost more each (a page per column, the dictionary,
// fresh column writers), end less often. Smaller pages and bound cost CPU (BENCHMARKS.md,
// "Target 2": 16 MiB and 64 KiB pages, up to 1.34x; these, 0.99-1.13x).
const partPageBytes = 128 << 10

// partRun is the files of one epoch of a partitioned table, one open per partition, that all
// lanes write into.
type partRun struct {
	spec  *rowFileSpec
	run   string // names the run's files
	mu    sync.Mutex
	parts map[partKey]*partFile
	n     atomic.Int64 // len(parts)
	held  atomic.Int64 // what the open files hold in memory, as of their last writes
}

// partFile is a partition's files in a run; mu orders the lanes writing into it.
type partFile struct {
	mu    sync.Mutex
	files *rowFiles
	held  int64 // the open file's share of the run's held
}

func newPartRun(spec *rowFileSpec) *partRun {
	return &partRun{spec: spec, run: uuid.NewString(), parts: map[partKey]*partFile{}}
}

// file returns the files of partition k, starting them if needed.
func (r *partRun) file(k partKey) (*partFile, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pf := r.parts[k]; pf != nil {
		return pf, nil
	}
	loc, values, err := r.spec.part.location(k)
	if err != nil {
		return nil, err
	}
	files := &rowFiles{spec: r.spec, lane: len(r.parts), run: r.run, loc: loc, values: values}
	pf := &partFile{files: files}
	r.parts[k] = pf
	r.n.Add(1)
	return pf, nil
}

// bound counts what pf's open file holds after a write and, when the run's files hold more
// than partBufferBytes and pf at least its share of them, ends pf's row group; under pf.mu.
func (r *partRun) bound(pf *partFile) error {
	var h int64
	if open := pf.files.open; open != nil {
		h = open.pw.Held()
	}
	total := r.held.Add(h - pf.held)
	pf.held = h
	if total <= partBufferBytes || h*r.n.Load() < total {
		return nil
	}
	if err := pf.files.open.pw.EndRowGroup(); err != nil {
		return fmt.Errorf("writing %s: %w", pf.files.open.path, err)
	}
	r.held.Add(-h)
	pf.held = 0
	return nil
}

// end closes the run's files and returns them; the last lane to flush the epoch calls it.
func (r *partRun) end() ([]iceberg.DataFile, error) {
	var all []iceberg.DataFile
	for _, pf := range r.parts {
		files, err := pf.files.end()
		if err != nil {
			r.stop()
			return nil, err
		}
		all = append(all, files...)
	}
	return all, nil
}

// stop drops the run's open files; they are never committed.
func (r *partRun) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pf := range r.parts {
		pf.mu.Lock()
		pf.files.abort()
		pf.mu.Unlock()
	}
}

// writeParts writes the rows of g into the files of their partitions in the epoch's shared run.
// A row that does not fit the table goes to errOut, and the others are written; without
// errOut it stops the pipeline.
func (w *laneWriter) writeParts(ctx context.Context, g *routed, wr *writing, b *schemas.Batch, errOut *component.ErrorOutput, errs *schemas.Batch) (*schemas.Batch, error) {
	run := wr.parts.run(w.flushed+1, w.s.flushedLanes, func() *partRun { return newPartRun(wr.direct) })
	w.feeds(&wr.parts)
	pos := positions(b, g.idx)
	var bad []int // indexes in g.rows of the rows refused
	var badErr []error
	refuse := func(i int, perr *parquetrow.RowError) {
		perr.Index = i
		bad, badErr = append(bad, i), append(badErr, errOfRow(wr.conv, g.rows, pos, perr))
	}
	groups := map[partKey][]int{}
	var keys []partKey
	for i, row := range g.rows {
		k, err := wr.direct.part.key(row)
		if err != nil {
			refuse(i, err.(*parquetrow.RowError))
			continue
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	rows := make([]schemas.Row, 0, len(g.rows))
	for _, k := range keys {
		idx := groups[k]
		rows = rows[:0]
		for _, i := range idx {
			rows = append(rows, g.rows[i])
		}
		pf, err := run.file(k)
		if err != nil {
			return nil, w.s.writeErr(g.ts, err)
		}
		pf.mu.Lock()
		for len(rows) > 0 {
			err = pf.files.write(ctx, rows)
			perr, ok := err.(*parquetrow.RowError)
			if !ok {
				break
			}
			j := perr.Index
			refuse(idx[j], perr)
			err = nil // the group's other rows are written on
			rows, idx = slices.Delete(rows, j, j+1), slices.Delete(idx, j, j+1)
		}
		if err == nil {
			err = run.bound(pf)
		}
		pf.mu.Unlock()
		if err != nil {
			return nil, w.s.writeErr(g.ts, err)
		}
	}
	order := make([]int, len(bad)) // the refused rows in the batch's order
	for n := range order {
		order[n] = n
	}
	slices.SortFunc(order, func(x, y int) int { return bad[x] - bad[y] })
	for _, n := range order {
		i := bad[n]
		if errOut == nil {
			return nil, fmt.Errorf("%s: table %s: %w", w.s.what, g.ts.name, badErr[n])
		}
		re := badErr[n].(*rowError)
		var err error
		if errs, err = errOut.Add(errs, b, g.idx[i], fmt.Errorf("%s: table %s: %w", w.s.what, g.ts.name, re.Err)); err != nil {
			return nil, err
		}
	}
	return errs, nil
}
