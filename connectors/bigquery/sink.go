package bigquery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"cloud.google.com/go/bigquery/storage/managedwriter"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// sink is WriteToBigQuery. With exactly_once each lane appends an epoch's rows to a pending
// stream of its own (or of its share of num_streams) with explicit offsets; Flush finalizes
// the stream; Commit records the intent, commits the epoch's streams with one
// BatchCommitWriteStreams, and records the checkpoint. With at_least_once the lanes append to
// the table's default stream and Commit records the checkpoint.
type sink struct {
	what string
	p    *plan
	cs   component.CheckpointStore // a Kafka source's, if one is upstream
	// count counts the rows of the table read from ranges (countRows, a query; the tests on
	// the loopback server, which has no query engine, count its rows instead).
	count func(context.Context, []offsetRange) (int64, error)

	bytesWritten atomic.Int64 // encoded rows appended this run, retries included (component.Measured)

	// Set by Open.
	exactly bool
	// unknownCommit decides an old intent whose streams BigQuery forgot (SinkInfo).
	unknownCommit component.CommitVerdict
	shared        bool   // several copies write the sink: each records what it moved (Commit.OwnRecord)
	holds         string // what the table holds when the sink has no state (Holds)
	stored        bool   // the store holds this copy's state (Open found it, or Claim or Commit saved it)
	bq            *bigquery.Client
	mw            *managedwriter.Client
	enc           *encoder
	store         stateStore
	lanes         int
	slots         []*slot
	writers       map[int]*laneWriter

	mu      sync.Mutex
	st      state                      // the committed checkpoint
	pending map[uint64][]finalStream   // epoch -> its finalized, uncommitted streams
	written map[uint64]schemas.Offsets // epoch -> per partition, the first offset its rows hold
}

// finalStream is a finalized pending stream and its row count.
type finalStream struct {
	name string
	rows int64
}

func newSink(what string, p *plan) *sink {
	s := &sink{what: what, p: p}
	s.count = s.countRows
	return s
}

// Summary says where the rows go, for the start log.
func (s *sink) Summary() string { return "BigQuery table " + s.p.ref.String() }

// DeliversAsWritten: with at_least_once, rows go to the default stream, visible at once.
func (s *sink) DeliversAsWritten() {}

func (s *sink) Open(ctx context.Context, info component.SinkInfo) (*component.Checkpoint, error) {
	s.exactly, s.shared, s.holds = s.p.exactly, info.Shared, ""
	s.unknownCommit = info.UnknownCommit
	s.lanes = max(info.Lanes, 1)
	if err := s.reach(ctx); err != nil {
		return nil, err
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, tableTimeout)
	table, err := s.ensureTable(tctx)
	cancel()
	if err != nil {
		return nil, err
	}
	if err := checkCompatible(table.Schema, s.p.stored); err != nil {
		return nil, fmt.Errorf("%s: the rows do not fit table %s:\n%w", s.what, s.p.ref, err)
	}
	if s.enc, err = newEncoder(table.Schema, s.p.stored); err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", s.what, s.p.ref, err)
	}
	if s.store, err = s.openStore(ctx, info); err != nil {
		return nil, err
	}
	st, others, err := s.store.load(ctx)
	if err == nil && st == nil && len(others) == 0 {
		st, err = s.adoptStateFile(ctx, info)
	}
	s.stored = st != nil
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	if st == nil {
		holdsRows := table.NumRows > 0 || table.StreamingBuffer != nil && table.StreamingBuffer.EstimatedRows > 0
		if s.p.cfg.WriteDisposition == "WRITE_EMPTY" && holdsRows {
			return nil, fmt.Errorf("%s: write_disposition WRITE_EMPTY, and table %s already holds rows", s.what, s.p.ref)
		}
		if holdsRows && len(others) == 0 {
			s.holds = fmt.Sprintf("table %s holds rows, and %s holds no state of this sink", s.p.ref, s.store.where())
		}
		st = &state{Pipeline: info.Pipeline}
	}
	if st.Table != "" && st.Table != s.p.ref.String() {
		return nil, fmt.Errorf("%s: its state %s was written for table %s, and it now writes %s: the checkpoint there is not this table's. "+
			"Give the pipeline another options.name or the sink another checkpoint_dir to start afresh, or write to %s again",
			s.what, s.store.where(), st.Table, s.p.ref, st.Table)
	}
	st.Table = s.p.ref.String()
	if st.Intent != nil {
		if err := s.recover(ctx, st, others); err != nil {
			return nil, err
		}
	}
	s.st = *st
	s.pending, s.written, s.writers = map[uint64][]finalStream{}, map[uint64]schemas.Offsets{}, map[int]*laneWriter{}
	n := s.lanes
	if k := s.p.cfg.NumStreams; k > 0 && k < n {
		n = k
	}
	s.slots = make([]*slot, n)
	for i := range s.slots {
		s.slots[i] = &slot{s: s, sharers: (s.lanes - i + n - 1) / n, segs: map[int]*segment{}}
	}
	return s.merged(ctx, *st, others)
}

// UseCheckpointStore takes the checkpoint store of a Kafka source upstream: the sink keeps its
// state there unless checkpoint_dir says otherwise.
func (s *sink) UseCheckpointStore(cs component.CheckpointStore) { s.cs = cs }

// inStore reports whether the state is kept in the source's checkpoint store.
func (s *sink) inStore() bool { return s.cs != nil && s.p.cfg.CheckpointDir == "" }

// openStore opens where the sink keeps its state: the checkpoint store of the Kafka source
// upstream, or a file in checkpoint_dir (given, or without such a source by default).
func (s *sink) openStore(ctx context.Context, info component.SinkInfo) (stateStore, error) {
	if s.inStore() {
		ks, err := openKafkaState(ctx, s.cs, info.Pipeline, s.p.name, info.Instance)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
		return ks, nil
	}
	if info.Shared {
		return nil, fmt.Errorf("%s: several copies of the pipeline write it (its source reads in a consumer group), and checkpoint_dir keeps its state on one machine: "+
			"remove checkpoint_dir, and the state is kept in the Kafka source's checkpoint topic, which every copy reads", s.what)
	}
	return stateFileFor(s.stateDir(), info.Pipeline, s.p.name, info.Instance), nil
}

// adoptStateFile returns the state that a run before the checkpoint store was used kept in
// the default checkpoint_dir, saved into the store, or nil when there is none.
func (s *sink) adoptStateFile(ctx context.Context, info component.SinkInfo) (*state, error) {
	if !s.inStore() {
		return nil, nil
	}
	file := stateFileFor(s.stateDir(), info.Pipeline, s.p.name, info.Instance)
	st, err := file.read()
	if st == nil || err != nil {
		return nil, err
	}
	if err := s.store.save(ctx, st, nil); err != nil {
		return nil, err
	}
	slog.Info("the BigQuery sink's state moved from its file to the checkpoint store", "sink", s.what, "from", file.path, "to", s.store.where())
	return st, nil
}

// merged returns the checkpoint the sink resumes from: own's, with every partition at the
// highest offset any copy of the pipeline committed. Another copy's commit that a crash
// interrupted, and that would move a partition further, is settled first (its streams
// committed if BigQuery still holds them finalized): that partition may be this copy's now.
func (s *sink) merged(ctx context.Context, own state, others map[string]*state) (*component.Checkpoint, error) {
	next := own.Next.Clone()
	for key, o := range others {
		if o.Table != "" && o.Table != s.p.ref.String() {
			// A copy that wrote another table before the pipeline was pointed here: its
			// offsets and its commits are that table's.
			slog.Warn("ignoring the state of a copy that wrote another table", "sink", s.what, "copy", key, "its table", o.Table, "table", s.p.ref.String())
			delete(others, key)
			continue
		}
		next.Advance(o.Next)
	}
	states := append(slices.Collect(maps.Values(others)), &own)
	settled := map[string]verdict{}
	for _, key := range slices.Sorted(maps.Keys(others)) {
		in := others[key].Intent
		if in == nil {
			continue
		}
		v, ok := settledAs(key, in.Epoch, states...)
		if !ok && next.Includes(in.Next) {
			continue
		}
		if !ok {
			committed, how, err := s.settle(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("%w (settling the commit of copy %s)", err, key)
			}
			v = verdict{Epoch: in.Epoch, Committed: committed}
			slog.Info("settled a BigQuery commit another copy left under way (it may still be running it): "+how, "sink", s.what, "copy", key, "epoch", in.Epoch, "rows", in.Rows, "committed", committed)
		}
		settled[key] = v // kept while the copy's record shows the intent
		if v.Committed {
			next.Advance(in.Next)
		}
	}
	s.mu.Lock()
	s.st.Settled = settled
	s.mu.Unlock()
	s.mu.Lock()
	stored := s.stored
	s.mu.Unlock()
	if own.Epoch == 0 && len(next) == 0 && !stored {
		return nil, nil
	}
	return &component.Checkpoint{Pipeline: own.Pipeline, Epoch: own.Epoch, Next: next, State: own.State, Lineage: own.Lineage}, nil
}

// Reload reads the states of the other copies again and returns the checkpoint merged over
// them (merged): a copy in the same consumer group may have committed partitions this one is
// now given.
func (s *sink) Reload(ctx context.Context) (*component.Checkpoint, error) {
	_, others, err := s.store.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	s.mu.Lock()
	own := s.st
	s.mu.Unlock()
	return s.merged(ctx, own, others)
}

// extraWriteOptions are added to the Storage Write API client's options (tests: an
// interceptor for an emulator).
var extraWriteOptions []option.ClientOption

// connect makes the BigQuery and Storage Write API clients.
func (s *sink) connect(ctx context.Context) error {
	cfg := s.p.cfg
	var auth []option.ClientOption
	if cfg.CredentialsFile != "" {
		auth = append(auth, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.CredentialsFile))
	}
	bqOpts, mwOpts := auth, auth
	if cfg.Endpoint != "" {
		bqOpts = []option.ClientOption{option.WithEndpoint(cfg.Endpoint), option.WithoutAuthentication()}
	}
	if cfg.StorageEndpoint != "" {
		mwOpts = []option.ClientOption{option.WithEndpoint(cfg.StorageEndpoint), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	}
	mwOpts = append(mwOpts, extraWriteOptions...)
	var err error
	if s.bq, err = bigquery.NewClient(ctx, s.p.ref.project, bqOpts...); err != nil {
		return fmt.Errorf("%s: connect to BigQuery: %w", s.what, err)
	}
	if s.mw, err = managedwriter.NewClient(ctx, s.p.ref.project, mwOpts...); err != nil {
		return fmt.Errorf("%s: connect to the BigQuery Storage Write API: %w", s.what, err)
	}
	return nil
}

// apiAddress is where the BigQuery API is asked, for messages.
func (p *plan) apiAddress() string {
	if p.cfg.Endpoint != "" {
		return p.cfg.Endpoint
	}
	return "bigquery.googleapis.com"
}

// ensureTable returns the table's metadata, creating the table when it is missing and
// create_disposition allows.
func (s *sink) ensureTable(ctx context.Context) (*bigquery.TableMetadata, error) {
	t := s.bq.DatasetInProject(s.p.ref.project, s.p.ref.dataset).Table(s.p.ref.table)
	md, err := t.Metadata(ctx)
	if err == nil || !isHTTPNotFound(err) {
		if err != nil {
			return nil, fmt.Errorf("%s: read table %s from the BigQuery API at %s: %w", s.what, s.p.ref, s.p.apiAddress(), err)
		}
		return md, nil
	}
	if s.p.cfg.CreateDisposition == "CREATE_NEVER" {
		return nil, fmt.Errorf("%s: table %s does not exist, and create_disposition is CREATE_NEVER", s.what, s.p.ref)
	}
	schema, err := tableSchemaFor(s.p.stored)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	md = &bigquery.TableMetadata{Schema: schema}
	if tp := s.p.cfg.TimePartitioning; tp != nil {
		md.TimePartitioning = &bigquery.TimePartitioning{Type: bigquery.TimePartitioningType(strings.ToUpper(tp.Type)), Field: tp.Field}
		if tp.Type == "" {
			md.TimePartitioning.Type = bigquery.DayPartitioningType
		}
	}
	if len(s.p.cfg.ClusteringFields) > 0 {
		md.Clustering = &bigquery.Clustering{Fields: s.p.cfg.ClusteringFields}
	}
	if err := t.Create(ctx, md); err != nil && !isHTTPConflict(err) {
		return nil, fmt.Errorf("%s: create table %s: %w", s.what, s.p.ref, err)
	}
	slog.Info("created BigQuery table", "sink", s.what, "table", s.p.ref.String())
	md, err = t.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: read table %s from the BigQuery API at %s: %w", s.what, s.p.ref, s.p.apiAddress(), err)
	}
	return md, nil
}

// tableTimeout bounds reading (and creating) the table at Open: the client retries server
// errors until its context ends, so without it a failing service would hold the start
// silently.
const tableTimeout = 2 * time.Minute

// stateDir is checkpoint_dir, by default .sluice/bigquery.
func (s *sink) stateDir() string {
	if s.p.cfg.CheckpointDir == "" {
		return ".sluice/bigquery"
	}
	return s.p.cfg.CheckpointDir
}

func isHTTPNotFound(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusNotFound
}

func isHTTPConflict(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusConflict
}

// Writer returns the writer of a lane: the same one for every call, since a lane's writer
// counts its segments.
func (s *sink) Writer(lane int) component.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.writers[lane]
	if w == nil {
		w = &laneWriter{s: s, slot: s.slots[lane%len(s.slots)]}
		s.writers[lane] = w
	}
	return w
}

// wrote records where a lane's rows of epoch begin, per partition, for its Commit.
func (s *sink) wrote(epoch uint64, first schemas.Offsets) {
	if len(first) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written[epoch] == nil {
		s.written[epoch] = schemas.Offsets{}
	}
	lowerTo(s.written[epoch], first)
}

// lowerTo moves each partition of o down to its offset in other, adding those o lacks.
func lowerTo(o, other schemas.Offsets) {
	for src, parts := range other {
		for p, off := range parts {
			if cur, ok := o.Get(src, p); !ok || off < cur {
				o.Set(src, p, off)
			}
		}
	}
}

// sealed records the finalized streams of an epoch for its Commit.
func (s *sink) sealed(epoch uint64, streams ...finalStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[epoch] = append(s.pending[epoch], streams...)
}

// Commit commits the streams of the epochs up to cp.Epoch with the checkpoint cp: intent
// first, then BatchCommitWriteStreams, then the new checkpoint.
func (s *sink) Commit(ctx context.Context, cp component.Commit) error {
	s.mu.Lock()
	var streams []string
	var rows int64
	var done []uint64
	for e, fs := range s.pending {
		if e > cp.Epoch {
			continue
		}
		done = append(done, e)
		for _, f := range fs {
			streams = append(streams, f.name)
			rows += f.rows
		}
	}
	written := schemas.Offsets{}
	for e, first := range s.written {
		if e <= cp.Epoch {
			lowerTo(written, first)
		}
	}
	st := s.st
	s.mu.Unlock()
	if cp.Epoch <= st.Epoch && st.Epoch > 0 {
		return nil // committed before a restart
	}
	if s.shared {
		cp.Next = cp.OwnRecord(st.Next)
	}
	if len(streams) > 0 {
		if err := testPause("finalized"); err != nil {
			return err
		}
		st.Intent = &intent{Epoch: cp.Epoch, Streams: streams, Rows: rows, Written: written, Next: cp.Next, State: cp.State, At: time.Now().UTC(), Lineage: cp.Lineage}
		if err := s.store.save(ctx, &st, intentFences(cp, written)); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		if err := testPause("intent-saved"); err != nil {
			return err
		}
		if err := s.batchCommit(ctx, streams); err != nil {
			return err
		}
		if err := testPause("committed"); err != nil {
			return err
		}
	}
	next := state{Pipeline: cp.Pipeline, Table: st.Table, Epoch: cp.Epoch, Next: cp.Next, State: cp.State, Lineage: cp.Lineage, Settled: st.Settled}
	if err := s.store.save(ctx, &next, cp.Fences); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.mu.Lock()
	next.Settled = s.st.Settled // as Reload may have found them meanwhile
	s.st, s.stored = next, true
	for _, e := range done {
		delete(s.pending, e)
	}
	for e := range s.written {
		if e <= cp.Epoch {
			delete(s.written, e)
		}
	}
	s.mu.Unlock()
	return nil
}

// intentFences are the fences of cp for saving its intent: the same memberships, with the
// offsets the consumer group may hold while the commit is under way. Those are where each
// partition's rows of the commit begin: where the sink's checkpoint has it (cp.From), else
// its first row written, else (no row of it written) its next offset. Should the commit be
// found lost, a partition the checkpoint does not hold resumes from the group's offset, so the
// commit's own offsets go to the group only with the checkpoint after it.
func intentFences(cp component.Commit, written schemas.Offsets) []component.GroupFence {
	out := make([]component.GroupFence, len(cp.Fences))
	for i, f := range cp.Fences {
		at := schemas.Offsets{}
		for src, parts := range f.Offsets {
			for p, next := range parts {
				if v, ok := cp.From.Get(src, p); ok {
					next = v
				} else if v, ok := written.Get(src, p); ok {
					next = v
				}
				at.Set(src, p, next)
			}
		}
		f.Offsets = at
		out[i] = f
	}
	return out
}

// batchCommit commits streams atomically. A stream already committed (a reply lost before a
// retry, or a commit recovered after a crash) counts as committed.
func (s *sink) batchCommit(ctx context.Context, streams []string) error {
	req := &storagepb.BatchCommitWriteStreamsRequest{Parent: s.p.ref.parent(), WriteStreams: streams}
	var lastErr error
	for attempt := range 5 {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		resp, err := s.mw.BatchCommitWriteStreams(ctx, req)
		if err != nil {
			lastErr = err
			if retryable(err) {
				continue
			}
			return fmt.Errorf("%s: commit %d streams to %s: %w", s.what, len(streams), s.p.ref, err)
		}
		// The call succeeds with StreamErrors when nothing was committed.
		refused := &commitRefused{}
		for _, se := range resp.GetStreamErrors() {
			if se.GetCode() != storagepb.StorageError_STREAM_ALREADY_COMMITTED {
				refused.errs = append(refused.errs, se)
			}
		}
		if len(refused.errs) > 0 {
			return fmt.Errorf("%s: BigQuery committed none of the epoch's %d streams to %s: %w", s.what, len(streams), s.p.ref, refused)
		}
		if resp.GetCommitTime() == nil && len(resp.GetStreamErrors()) == 0 {
			return fmt.Errorf("%s: BigQuery answered the commit of %d streams to %s without a commit time", s.what, len(streams), s.p.ref)
		}
		return nil
	}
	return fmt.Errorf("%s: commit %d streams to %s: %w", s.what, len(streams), s.p.ref, lastErr)
}

// commitRefused is a BatchCommitWriteStreams that answered with stream errors: nothing was
// committed.
type commitRefused struct{ errs []*storagepb.StorageError }

func (e *commitRefused) Error() string {
	lines := make([]string, len(e.errs))
	for i, se := range e.errs {
		lines[i] = fmt.Sprintf("%s: %s %s", se.GetEntity(), se.GetCode(), se.GetErrorMessage())
	}
	return strings.Join(lines, "\n")
}

// gone reports whether every refused stream is one BigQuery no longer has in a committable
// state: unknown, or "not finalized or garbaged" (INVALID_STREAM_STATE for a stream that was
// finalized before its intent was saved).
func (e *commitRefused) gone() bool {
	for _, se := range e.errs {
		if c := se.GetCode(); c != storagepb.StorageError_INVALID_STREAM_STATE && c != storagepb.StorageError_STREAM_NOT_FOUND {
			return false
		}
	}
	return true
}

// Close closes the sink's streams and clients; closing it again does nothing (the Storage
// Write API client panics on a second Close).
func (s *sink) Close(ctx context.Context) error {
	var errs []error
	for _, sl := range s.slots {
		errs = append(errs, sl.close())
	}
	if s.mw != nil {
		errs = append(errs, s.mw.Close())
	}
	if s.bq != nil {
		errs = append(errs, s.bq.Close())
	}
	if s.store != nil {
		errs = append(errs, s.store.close())
	}
	s.slots, s.mw, s.bq, s.store = nil, nil, nil, nil
	return errors.Join(errs...)
}

// Holds says what the table holds when the sink has no state of the pipeline, as Open found
// it (component.Occupied); with copies, unless another copy saved its state since.
func (s *sink) Holds(ctx context.Context) (string, error) {
	if s.holds == "" || !s.shared {
		return s.holds, nil
	}
	_, others, err := s.store.load(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.what, err)
	}
	if len(others) > 0 {
		return "", nil
	}
	return s.holds, nil
}

// Claim saves the sink's state of epoch 0 at next (component.Occupied): at_least_once rows are
// visible as they are appended, before their epoch's state is saved.
func (s *sink) Claim(ctx context.Context, next schemas.Offsets) error {
	s.mu.Lock()
	s.st.Next = next
	st := s.st
	s.mu.Unlock()
	if err := s.store.save(ctx, &st, nil); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.mu.Lock()
	s.stored = true
	s.mu.Unlock()
	return nil
}

// Identity is what the sink writes: its table.
func (s *sink) Identity() []string { return []string{"bigquery table " + s.p.ref.String()} }

// Written implements component.Measured: BigQuery has no files; the bytes are the encoded
// rows appended this run, retries included.
func (s *sink) Written() (files, bytes int64) { return 0, s.bytesWritten.Load() }
