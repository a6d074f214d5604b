package iceberg

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// Table properties sluice reads when it writes.
const (
	targetFileSizeKey = table.WriteTargetFileSizeBytesKey // write.target-file-size-bytes
	rowGroupSizeKey   = "write.parquet.row-group-size-bytes"
	pageSizeKey       = "write.parquet.page-size-bytes"
	dictSizeKey       = "write.parquet.dict-size-bytes"
)

// sink writes one Iceberg table: lanes write Parquet data files, each epoch's files are
// sealed at Flush, and Commit adds all sealed files of the epochs it covers in one snapshot
// whose summary carries the checkpoint. docs/iceberg.md has the protocol.
type sink struct {
	what string // the component, for messages
	cfg  *WriteConfig
	plan *plan

	commitMu sync.Mutex   // serializes Open, Commit, Reload and Close
	retries  atomic.Int64 // commit attempts after the first, for tests and metrics
	// nextExpiry is when maintain may expire snapshots next; guarded by commitMu.
	nextExpiry time.Time

	mu       sync.Mutex // guards the fields below; never held across I/O
	cat      catalog.Catalog
	ident    table.Identifier
	tbl      *table.Table // the table as of the last load or commit
	wr       *writing
	pipeline string
	instance string
	last     uint64                        // the newest epoch this instance committed
	sealed   map[uint64][]iceberg.DataFile // flushed, not committed files by epoch
	writers  map[int]*laneWriter

	// hook, when set (tests), is called at each step of Commit; an error stops the commit
	// there, as a crash would.
	hook func(step string) error
}

// The steps of Commit at which sink.hook is called.
const (
	stepBefore = "before" // the epoch's files are written; nothing is sent to the catalog
	stepSent   = "sent"   // the catalog accepted the commit; its reply is about to be read
)

// writing is what lanes need to write files: a view of the table with sluice's file sizes,
// and the conversion of rows into its Arrow schema.
type writing struct {
	tbl  *table.Table
	conv *converter
}

func newSink(what string, cfg *WriteConfig, p *plan) *sink {
	return &sink{what: what, cfg: cfg, plan: p, hook: pauseHook()}
}

// Summary says what the sink committed, for the end of a run.
func (s *sink) Summary() string { return s.describe() }

// Open loads the table, creating it if missing, checks that the rows fit it, and returns the
// pipeline's newest checkpoint in the table's history.
func (s *sink) Open(ctx context.Context, info component.SinkInfo) (*component.Checkpoint, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeAll()
	ident, err := identifier(s.cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	cat, err := openCatalog(ctx, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	cp, last, tbl, wr, err := s.open(ctx, cat, ident, info)
	if err != nil {
		_ = closeCatalog(cat)
		return nil, fmt.Errorf("%s: table %s: %w", s.what, s.cfg.Table, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cat, s.ident, s.tbl, s.wr = cat, ident, tbl, wr
	s.pipeline, s.instance, s.last = info.Pipeline, info.Instance, last
	s.sealed, s.writers = map[uint64][]iceberg.DataFile{}, map[int]*laneWriter{}
	return cp, nil
}

func (s *sink) open(ctx context.Context, cat catalog.Catalog, ident table.Identifier, info component.SinkInfo) (*component.Checkpoint, uint64, *table.Table, *writing, error) {
	tbl, _, err := loadOrCreate(ctx, cat, ident, s.plan)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	if err := checkCompatible(s.plan.rows, tbl.Schema()); err != nil {
		return nil, 0, nil, nil, fmt.Errorf("the rows do not fit the table's schema: %w", err)
	}
	wr, err := newWriting(tbl, cat, s.plan.rows)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	st, err := latest(tbl.Metadata(), info.Pipeline)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	last, err := lastEpoch(tbl.Metadata(), info.Pipeline, info.Instance)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	cp := checkpointOf(info.Pipeline, st)
	if cp != nil {
		// The offsets are merged over the copies of the pipeline; the epoch is this copy's
		// own, which its next epochs follow (copies number their epochs independently).
		cp.Epoch = last
	}
	return cp, last, tbl, wr, nil
}

// newWriting prepares writing rows of schema rows into tbl.
func newWriting(tbl *table.Table, cat table.CatalogIO, rows *schemas.Schema) (*writing, error) {
	view, err := writeView(tbl, cat)
	if err != nil {
		return nil, err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("the table's schema: %w", err)
	}
	conv, err := newConverter(sc, func(name string) func(schemas.Row) any {
		i, ok := rows.Index(name)
		if !ok {
			return nil
		}
		return func(r schemas.Row) any { return r[i] }
	})
	if err != nil {
		return nil, err
	}
	return &writing{tbl: view, conv: conv}, nil
}

// writeView returns tbl with sluice's file sizes where the table sets none: files roll at
// DefaultTargetFileSize, row groups are a quarter of that (at most 32 MiB), since iceberg-go
// only checks a file's size once a row group is written out, and pages an eighth of a row
// group (at most 1 MiB), since a row group's size only counts the pages written out, and so
// are dictionaries (at most 2 MiB), which count only when the row group ends.
func writeView(tbl *table.Table, cat table.CatalogIO) (*table.Table, error) {
	props := tbl.Properties()
	set := iceberg.Properties{}
	target := int64(props.GetInt(targetFileSizeKey, DefaultTargetFileSize))
	if _, ok := props[targetFileSizeKey]; !ok {
		set[targetFileSizeKey] = strconv.FormatInt(target, 10)
	}
	rowGroup := int64(props.GetInt(rowGroupSizeKey, int(min(max(target/4, 1), 32<<20))))
	if _, ok := props[rowGroupSizeKey]; !ok {
		set[rowGroupSizeKey] = strconv.FormatInt(rowGroup, 10)
	}
	// A row group's size counts only the data pages written out, not a dictionary.
	for key, limit := range map[string]int64{pageSizeKey: 1 << 20, dictSizeKey: 2 << 20} {
		if _, ok := props[key]; !ok {
			set[key] = strconv.FormatInt(min(max(rowGroup/8, 1), limit), 10)
		}
	}
	if len(set) == 0 {
		return tbl, nil
	}
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := b.SetProperties(set); err != nil {
		return nil, err
	}
	meta, err := b.Build()
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, cat), nil
}

// writing returns what lanes write with, or an error before Open.
func (s *sink) writing() (*writing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wr == nil {
		return nil, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	return s.wr, nil
}

func (s *sink) writeErr(err error) error {
	return fmt.Errorf("%s: writing data files of table %s: %w", s.what, s.cfg.Table, err)
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
	return w
}

// seal records the files a lane flushed for epoch.
func (s *sink) seal(epoch uint64, files []iceberg.DataFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed == nil {
		s.sealed = map[uint64][]iceberg.DataFile{}
	}
	s.sealed[epoch] = append(s.sealed[epoch], files...)
}

// pending returns the sealed files of the epochs up to epoch.
func (s *sink) pending(epoch uint64) []iceberg.DataFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []iceberg.DataFile
	for _, e := range slices.Sorted(maps.Keys(s.sealed)) {
		if e <= epoch {
			out = append(out, s.sealed[e]...)
		}
	}
	return out
}

// committed forgets the sealed files of the epochs up to epoch and records the commit.
func (s *sink) committed(epoch uint64, tbl *table.Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := range s.sealed {
		if e <= epoch {
			delete(s.sealed, e)
		}
	}
	s.last = max(s.last, epoch)
	if tbl != nil {
		s.tbl = tbl
	}
}

func (s *sink) state() (catalog.Catalog, *table.Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cat == nil {
		return nil, nil, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	return s.cat, s.tbl, nil
}

// Reload returns the table's current checkpoint of the pipeline, merged over every copy.
func (s *sink) Reload(ctx context.Context) (*component.Checkpoint, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	tbl, err := s.refresh(ctx)
	if err != nil {
		return nil, err
	}
	st, err := latest(tbl.Metadata(), s.pipeline)
	if err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, s.cfg.Table, err)
	}
	return checkpointOf(s.pipeline, st), nil
}

// refresh loads the table anew from the catalog.
func (s *sink) refresh(ctx context.Context) (*table.Table, error) {
	cat, _, err := s.state()
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, s.ident)
	if err != nil {
		return nil, fmt.Errorf("%s: load table %s: %w", s.what, s.cfg.Table, err)
	}
	s.mu.Lock()
	s.tbl = tbl
	s.mu.Unlock()
	return tbl, nil
}

// Close stops the lanes' open files without committing them and closes the catalog. Files
// flushed and not committed stay in the warehouse, referenced by no snapshot.
func (s *sink) Close(context.Context) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.closeAll()
}

func (s *sink) closeAll() error {
	s.mu.Lock()
	writers, cat := s.writers, s.cat
	s.writers, s.cat, s.wr, s.tbl, s.sealed = nil, nil, nil, nil, nil
	s.mu.Unlock()
	for _, w := range writers {
		w.abort()
	}
	if cat == nil {
		return nil
	}
	return closeCatalog(cat)
}

func (s *sink) step(name string) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(name)
}
