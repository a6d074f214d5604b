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

	"github.com/apache/arrow-go/v18/arrow"
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

// sink writes one Iceberg table, or with routing (`table: db.events_{country}`) the tables
// its rows name: lanes write Parquet data files per table, each epoch's files are sealed at
// Flush, and Commit adds all sealed files of the epochs it covers in one snapshot per table
// whose summary carries the checkpoint. docs/iceberg.md has the protocol.
type sink struct {
	what string // the component, for messages
	cfg  *WriteConfig
	plan *plan

	commitMu sync.Mutex   // serializes Open, Commit, Reload, Close and schema changes mid-run
	createMu sync.Mutex   // serializes preparing routed tables at their first use
	retries  atomic.Int64 // commit attempts after the first, for tests and metrics

	filesWritten, bytesWritten atomic.Int64 // data files written this run (component.Measured)

	mu       sync.Mutex // guards the fields below and those of the tables; never held across I/O
	cat      catalog.Catalog
	tables   map[string]*tableState // by name (db.events)
	pipeline string
	instance string
	marked   string // routed: the table whose newest commit of this copy marks an epoch complete
	// own is, routed, this copy's own record as of its newest complete epoch.
	own     schemas.Offsets
	writers map[int]*laneWriter

	// hook, when set (tests), is called at each step of Commit; an error stops the commit
	// there, as a crash would.
	hook func(step string) error
	// compactor runs the compaction key's rounds between commits (compact_run.go); nil: none.
	compactor *compactor
}

// tableState is one table the sink writes. Its fields are guarded by sink.mu, but nextExpiry
// (commitMu).
type tableState struct {
	name   string
	ident  table.Identifier
	tbl    *table.Table                  // the table as of the last load or commit
	last   uint64                        // the newest epoch this instance committed
	sealed map[uint64][]iceberg.DataFile // flushed, not committed files by epoch
	// wr is how lanes write the table now; a schema change mid-run (evolve.go) replaces it
	// and keeps the one before in retired, whose shared runs the lanes still flush.
	wr      atomic.Pointer[writing]
	retired []*writing
	// changes are, for upserts, the lanes' flushed and not committed changes by epoch.
	changes map[uint64][]changes
	// covered are, with routing, the table's own committed offsets (how far it holds each
	// partition's rows) as of Open, the last Reload or this copy's last commit to it: the
	// runner resumes every table from the oldest complete epoch, and the writers drop the rows
	// this table already holds. It is replaced, never changed: writers read it unlocked.
	covered schemas.Offsets
	// wrote are, with routing, by epoch not committed, the offset of covered under which the
	// writers wrote each partition's first rows to the table (noOffset: none). A commit must
	// still find them in the table (route_commit.go).
	wrote map[uint64]schemas.Offsets
	// nextExpiry is when maintain may expire snapshots next.
	nextExpiry time.Time
	// stateFiles are the window state files (statefile.go) this sink wrote to the table or
	// found named by its checkpoint at Open, until a commit finds them no longer needed.
	stateFiles []string
}

// The steps of Commit at which sink.hook is called, once per table committed.
const (
	stepBefore = "before" // the epoch's files are written; nothing is sent to the catalog
	stepSent   = "sent"   // the catalog accepted the commit; its reply is about to be read
	// stepEvolved: a schema change mid-run is committed; the epoch's files are not (evolve.go).
	stepEvolved = "evolved"
)

// writing is what lanes need to write files: a view of the table with sluice's file sizes,
// and the conversion of rows into its Arrow schema.
type writing struct {
	tbl    *table.Table
	conv   *converter           // of the sink's rows (plan.rows)
	shared sharedRuns[*segment] // a partitioned table's runs that all lanes feed (shared.go)
	parts  sharedRuns[*partRun] // and those of the direct path (parquetpart.go)
	// evolved are the converters of rows whose schema changed mid-run (evolve.go), into the
	// same Arrow schema as conv.
	evolved sync.Map     // *schemas.Schema -> *converter
	direct  *rowFileSpec // set when the lanes write the files themselves (parquetwrite.go)
}

func newSink(what string, cfg *WriteConfig, p *plan) *sink {
	s := &sink{what: what, cfg: cfg, plan: p, hook: pauseHook()}
	if cfg.Compaction != nil {
		s.compactor = newCompactor(cfg.Compaction)
	}
	return s
}

// catalogFile is the file of the sink's local SQLite catalog, or "" (diskError).
func (s *sink) catalogFile() string {
	props, err := catalogProps(s.cfg)
	if err != nil {
		return ""
	}
	return sqliteFile(props)
}

// Summary says what the sink committed, for the end of a run.
func (s *sink) Summary() string { return s.describe() }

// Open loads the table, creating it if missing, checks that the rows fit it, and returns the
// pipeline's newest checkpoint in the table's history. With routing it finds the routed
// tables the pipeline committed to and returns their newest complete epoch (route_open.go).
func (s *sink) Open(ctx context.Context, info component.SinkInfo) (*component.Checkpoint, error) {
	s.stopCompaction()
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeAll()
	cat, err := openCatalog(ctx, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	tables := map[string]*tableState{}
	var cp *component.Checkpoint
	var mark *routedMark
	if s.plan.route == nil {
		var ts *tableState
		ts, cp, err = s.openTable(ctx, cat, info)
		if ts != nil {
			tables[ts.name] = ts
		}
	} else {
		tables, cp, mark, err = s.openRouted(ctx, cat, info.Pipeline, info.Instance)
	}
	if err != nil {
		_ = closeCatalog(cat)
		return nil, fmt.Errorf("%s: %w", s.what, diskError(err, s.catalogFile()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cat, s.tables, s.marked, s.own = cat, tables, "", nil
	if mark != nil {
		s.marked, s.own = mark.table.name, mark.st.own.Clone()
	}
	s.pipeline, s.instance = info.Pipeline, info.Instance
	s.writers = map[int]*laneWriter{}
	return cp, nil
}

// openTable opens the one table of a sink without routing.
func (s *sink) openTable(ctx context.Context, cat catalog.Catalog, info component.SinkInfo) (*tableState, *component.Checkpoint, error) {
	ts, err := s.prepare(ctx, cat, s.cfg.Table)
	if err != nil {
		return nil, nil, err
	}
	cp, err := s.openCheckpoint(ctx, cat, ts, info)
	if err != nil {
		return nil, nil, fmt.Errorf("table %s: %w", ts.name, err)
	}
	if cp != nil {
		// The offsets are merged over the copies of the pipeline; the epoch is this copy's
		// own, which its next epochs follow (copies number their epochs independently).
		cp.Epoch = ts.last
	}
	return ts, cp, nil
}

// prepare loads the table name, creating it if missing and adding columns if
// schema_evolution asks, checks that the rows fit it and prepares writing into it.
func (s *sink) prepare(ctx context.Context, cat catalog.Catalog, name string) (*tableState, error) {
	ident, err := identifier(name)
	if err != nil {
		return nil, err
	}
	tbl, _, err := loadOrCreate(ctx, cat, ident, s.plan)
	if err == nil && s.plan.upsert != nil {
		err = s.plan.upsert.checkTable(tbl)
	}
	if err == nil && s.cfg.SchemaEvolution == addColumns {
		tbl, err = evolveTable(ctx, cat, tbl, s.plan.rows)
	}
	if err == nil {
		if err = checkCompatible(s.plan.rows, tbl.Schema()); err != nil {
			err = fmt.Errorf("the rows do not fit the table's schema: %w", err)
		}
	}
	var wr *writing
	if err == nil {
		wr, err = newWriting(tbl, cat, s.plan.rows)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	ts := &tableState{name: name, ident: ident, tbl: tbl, sealed: map[uint64][]iceberg.DataFile{},
		changes: map[uint64][]changes{}}
	ts.wr.Store(wr)
	return ts, nil
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
	get := byName(rows)
	conv, err := newConverter(sc, get)
	if err != nil {
		return nil, err
	}
	return &writing{tbl: view, conv: conv, direct: newRowFileSpec(view, sc, get)}, nil
}

// rowsConverter converts rows of schema rows into records of the Arrow schema sc, by name.
func rowsConverter(sc *arrow.Schema, rows *schemas.Schema) (*converter, error) {
	return newConverter(sc, byName(rows))
}

// byName returns, for a column name, the getter of the rows' field of that name (nil if none).
func byName(rows *schemas.Schema) func(name string) func(schemas.Row) any {
	return func(name string) func(schemas.Row) any {
		i, ok := rows.Index(name)
		if !ok {
			return nil
		}
		return func(r schemas.Row) any { return r[i] }
	}
}

// writeView returns tbl with sluice's file sizes where the table sets none: files roll at
// DefaultTargetFileSize, row groups are a quarter of that (at most maxRowGroup), since iceberg-go
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
	rowGroup := int64(props.GetInt(rowGroupSizeKey, int(min(max(target/4, 1), maxRowGroup))))
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

// tableFor returns the table name, preparing it (creating it if missing) at its first use.
func (s *sink) tableFor(ctx context.Context, name string) (*tableState, error) {
	s.mu.Lock()
	ts, cat := s.tables[name], s.cat
	s.mu.Unlock()
	if ts != nil {
		return ts, nil
	}
	if cat == nil {
		return nil, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.Lock()
	ts = s.tables[name]
	s.mu.Unlock()
	if ts != nil {
		return ts, nil
	}
	ts, err := s.prepare(ctx, cat, name)
	if err == nil && s.plan.route != nil {
		err = s.adoptRouted(ts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables == nil {
		return nil, fmt.Errorf("%s: used after Close", s.what)
	}
	s.tables[name] = ts
	return ts, nil
}

func (s *sink) writeErr(ts *tableState, err error) error {
	return fmt.Errorf("%s: writing data files of table %s: %w", s.what, ts.name, err)
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
		var flushed uint64
		for _, ts := range s.tables {
			flushed = max(flushed, ts.last)
		}
		w = &laneWriter{s: s, lane: lane, flushed: flushed}
		s.writers[lane] = w
	}
	return w
}

// seal records the files a lane flushed for epoch into ts.
func (s *sink) seal(ts *tableState, epoch uint64, files []iceberg.DataFile) {
	if len(files) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts.sealed[epoch] = append(ts.sealed[epoch], files...)
}

// pending returns the sealed files of ts for the epochs up to epoch.
func (s *sink) pending(ts *tableState, epoch uint64) []iceberg.DataFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []iceberg.DataFile
	for _, e := range slices.Sorted(maps.Keys(ts.sealed)) {
		if e <= epoch {
			out = append(out, ts.sealed[e]...)
		}
	}
	return out
}

// committed forgets the sealed files of ts for the epochs up to epoch and records the commit
// (with routing, tc: what the table holds now).
func (s *sink) committed(ts *tableState, epoch uint64, tbl *table.Table, cp component.Commit, tc *tableCommit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tc != nil {
		recordRouted(ts, cp, tc)
	}
	for e := range ts.sealed {
		if e <= epoch {
			delete(ts.sealed, e)
		}
	}
	for e := range ts.changes {
		if e <= epoch {
			delete(ts.changes, e)
		}
	}
	ts.last = max(ts.last, epoch)
	if tbl != nil {
		ts.tbl = tbl
	}
}

// current returns the catalog and the table of ts as last loaded or committed.
func (s *sink) current(ts *tableState) (catalog.Catalog, *table.Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cat == nil {
		return nil, nil, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	return s.cat, ts.tbl, nil
}

// Reload returns the table's current checkpoint of the pipeline, merged over every copy.
func (s *sink) Reload(ctx context.Context) (*component.Checkpoint, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	cat, pipeline, instance, ts := s.cat, s.pipeline, s.instance, s.tables[s.cfg.Table]
	s.mu.Unlock()
	if cat == nil {
		return nil, fmt.Errorf("%s: used before Open or after Close", s.what)
	}
	if s.plan.route != nil {
		return s.reloadRouted(ctx, cat, pipeline, instance)
	}
	tbl, err := s.refresh(ctx, ts)
	if err != nil {
		return nil, err
	}
	st, err := latest(tbl.Metadata(), pipeline)
	if err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, ts.name, err)
	}
	cp, err := checkpointWithState(ctx, tbl, pipeline, st)
	if err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, ts.name, err)
	}
	return cp, nil
}

// refresh loads ts anew from the catalog.
func (s *sink) refresh(ctx context.Context, ts *tableState) (*table.Table, error) {
	cat, _, err := s.current(ts)
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, ts.ident)
	if err != nil {
		return nil, fmt.Errorf("%s: load table %s: %w", s.what, ts.name, diskError(err, s.catalogFile()))
	}
	s.mu.Lock()
	ts.tbl = tbl
	s.mu.Unlock()
	return tbl, nil
}

// Close stops the lanes' open files without committing them and closes the catalog. Files
// flushed and not committed stay in the warehouse, referenced by no snapshot.
func (s *sink) Close(context.Context) error {
	s.stopCompaction()
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.closeAll()
}

func (s *sink) closeAll() error {
	s.mu.Lock()
	writers, cat := s.writers, s.cat
	s.writers, s.cat, s.tables = nil, nil, nil
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

// Identity is what the sink writes: its table (or routing pattern).
func (s *sink) Identity() []string { return []string{"iceberg table " + s.cfg.Table} }

// Written implements component.Measured: the data files written this run and their sizes
// (compressed Parquet), committed or not yet.
func (s *sink) Written() (files, bytes int64) { return s.filesWritten.Load(), s.bytesWritten.Load() }
