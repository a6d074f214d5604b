package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"golang.org/x/sync/errgroup"
)

// RunConfig bounds and observes one run of a plan.
type RunConfig struct {
	// MaxRecords stops the run gracefully once this many records were read (whole batches,
	// so a few more may be read); 0: no limit.
	MaxRecords int64
	// For stops the run gracefully after this long; 0: no limit.
	For time.Duration
	// Stop, when closed, asks for a graceful stop: stop reading, commit, return.
	Stop <-chan struct{}
	// StopAtEnd makes sources that support it (component.Bounded) end at the records that
	// exist when the run starts, so the run drains the backlog, commits and returns.
	StopAtEnd bool
	// Instance names this copy of the pipeline when its sources share a consumer group with
	// other copies; "" means the host name.
	Instance string
	Log      *slog.Logger
	// Metrics, when set, receives the run's Prometheus metrics (sluice_*).
	Metrics prometheus.Registerer
	// Version is sluice's version, recorded in every commit (component.Lineage).
	Version string
	// AllowResetState lets a run start from checkpoints its spec changed incompatibly since
	// (upgrade.go).
	AllowResetState bool
	// UnknownCommit is the operator's verdict on a sink's interrupted commit whose outcome
	// the sink cannot learn (component.SinkInfo).
	UnknownCommit component.CommitVerdict
	// StartupTimeout is how long opening a component is tried again while a service it needs
	// cannot be reached (startup.go); 0: not at all.
	StartupTimeout time.Duration
	// Health, when set, follows whether the run is alive and ready (health.go).
	Health *Health
	// Recent, when set, keeps the sinks' last commits and the last error rows (live.go).
	Recent *Recent
	// ProgressInterval is how often the run logs a progress line at INFO (rates, lag, the last
	// commit; progress.go); 0: never.
	ProgressInterval time.Duration
	// Live, when set, is called about twice a second with the run's progress, for a display
	// that redraws it (sluice run on a terminal).
	Live func(Progress)
}

// Stats says what a run did.
type Stats struct {
	Read      int64
	ErrorRows int64
	Epochs    int
	Sinks     []SinkStats
}

// SinkStats says what one sink received.
type SinkStats struct {
	Name    string
	Rows    int64
	Skipped int64 // records its checkpoint already covered
	Summary string
}

// ErrDrainTimeout is returned when a graceful stop could not commit the last epoch in time.
var ErrDrainTimeout = errors.New("the last epoch was not committed before the drain timeout; the next run resumes from the last commit")

type item struct {
	b       *schemas.Batch
	barrier uint64
}

type sourceState struct {
	node    *Node
	src     component.Source
	out     []chan item // one per lane
	req     chan uint64 // barrier requests from the coordinator
	reports chan barrierReport
	ended   atomic.Bool
	records atomic.Int64 // records read, for metrics
	bytes   atomic.Int64 // bytes of the records read (Batch.Raw), for metrics
	heads   heads        // the time of the last record read of every partition (lag.go)
	oldest  time.Time    // the oldest record time read since the last barrier; the reader's own
	sinks   []*sinkState
	sent    bool // a batch went to a lane since the last barrier; the reader's own

	mu         sync.Mutex         // guards cancelRead
	cancelRead context.CancelFunc // interrupts the Read in progress, if any
	revoked    revokedSet         // partitions handed over to another copy (rebalance.go)
}

type barrierReport struct {
	epoch  uint64
	next   schemas.Offsets
	sent   bool      // records were sent to lanes in this epoch
	read   int64     // records the source had read in all, at the barrier
	oldest time.Time // the oldest record time of the epoch, if the source gives times
}

// interrupt makes a Read that waits for data return, so the reader answers a barrier request.
func (s *sourceState) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelRead != nil {
		s.cancelRead()
	}
}

// read calls Read with a context that the coordinator cancels when a barrier is due. It does
// not call Read at all when a request is already waiting.
func (s *sourceState) read(ctx context.Context) (*schemas.Batch, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancelRead = cancel
	pending := len(s.req) > 0
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancelRead = nil
		s.mu.Unlock()
	}()
	if pending {
		return nil, nil
	}
	b, err := s.src.Read(rctx)
	if errors.Is(err, context.Canceled) && rctx.Err() != nil && ctx.Err() == nil {
		err = nil // interrupted for a barrier: not a failure
	}
	return b, err
}

type sinkState struct {
	node       *Node
	sink       component.Sink
	restored   *component.Checkpoint
	covered    atomic.Pointer[schemas.Offsets] // what the sink already holds: lanes drop it
	mu         sync.Mutex                      // guards next (rebalances change it)
	next       schemas.Offsets                 // cumulative offsets committed with each epoch
	sources    []*sourceState
	writers    []component.Writer
	rows       atomic.Int64
	skipped    atomic.Int64
	lastCommit atomic.Int64 // Unix nanoseconds of the last commit
	commits    atomic.Int64
}

type run struct {
	plan      *Plan
	cfg       RunConfig
	log       *slog.Logger
	lanes     int
	sources   []*sourceState
	sinks     []*sinkState
	bySource  map[*Node]*sourceState
	bySink    map[*Node]*sinkState
	consumers map[*Node]map[string][]target
	laneDone  chan laneReport
	roundEnd  time.Time // when the coordinator's last barrier round ended; the coordinator's own
	wake      chan struct{}
	read      atomic.Int64
	errorRows atomic.Int64
	stopping  atomic.Bool
	stopRead  context.CancelFunc
	readCtx   context.Context
	epochs    atomic.Int64
	metrics   *metrics
	state     statefulState      // stateful transforms (stateful.go)
	split     splitPlan          // groupings split across copies (repartition.go)
	async     *asyncProgress     // with options.async_progress_tracking (async.go)
	revokes   chan revokeRequest // grouped sources giving partitions up (rebalance.go)
	finished  chan struct{}      // closed when the coordinator returns
	lost      atomic.Pointer[error]
	lineage   *component.Lineage // what every commit records of the spec (lineage.go)
	nodeIndex map[*Node]int      // a node's index in plan.Nodes and in counts' rows
	outTags   map[*Node][]string // a node's outputs, error outputs aside (counters.go)
	counts    [][]nodeCounts     // per lane, per node
	ends      ends               // where the sources' partitions end, polled (lag.go)
	started   time.Time          // when the run opened
}

// target is a consumer of an output: a node and which of its inputs the output feeds.
type target struct {
	node  *Node
	input int
}

// Execute runs the plan until its sources are exhausted, a stop is asked for, or a failure.
// Every epoch is committed by every sink before the next one is cut (synchronous progress).
func Execute(ctx context.Context, p *Plan, cfg RunConfig) (*Stats, error) {
	if p.Offline {
		return nil, errors.New("a pipeline loaded offline (as sluice validate does) cannot run: load it with its services")
	}
	p, split, err := splitForCopies(p)
	if err != nil {
		return nil, err
	}
	r := &run{plan: p, split: split, cfg: cfg, log: cfg.Log, lanes: p.Lanes(), bySource: map[*Node]*sourceState{},
		bySink: map[*Node]*sinkState{}, consumers: map[*Node]map[string][]target{}, wake: make(chan struct{}, 1),
		revokes: make(chan revokeRequest), finished: make(chan struct{})}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.laneDone = make(chan laneReport, r.lanes)
	r.lineage = lineageOf(p, cfg.Version)
	r.wire()
	r.wireCounts()
	r.wireStateful()
	if p.Options.AsyncProgressTracking {
		r.async = newAsyncProgress(r, time.Duration(p.Options.AsyncProgressCheckpointingInterval))
	}
	r.metrics = newMetrics(r)
	if cfg.Metrics != nil {
		if err := cfg.Metrics.Register(r.metrics); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
		defer cfg.Metrics.Unregister(r.metrics)
		r.instrument()
	}
	cfg.Health.setPhase("opening the sinks and sources and reading their checkpoints")
	defer cfg.Health.setPhase("the run has ended")
	first, err := r.open(ctx)
	defer r.close()
	if err != nil {
		return nil, err
	}
	r.started = time.Now()
	cfg.Health.started(p.EpochInterval)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	progressMode := "synchronous: each epoch is committed before the next is cut"
	if r.async != nil {
		progressMode = "asynchronous, at most every " + r.async.interval.String() + ": a crash delivers again what came since the last progress written"
	}
	r.log.Info("pipeline started", "pipeline", p.Options.Name, "lanes", r.lanes, "delivery", p.Options.Delivery,
		"epoch_every", p.EpochInterval.String(), "first_epoch", first, "progress", progressMode)

	g, gctx := errgroup.WithContext(ctx)
	r.readCtx, r.stopRead = context.WithCancel(gctx) // a failure anywhere also ends reads
	defer r.stopRead()
	for _, s := range r.sources {
		g.Go(func() error { return r.readLoop(gctx, s) })
	}
	for l := range r.lanes {
		g.Go(func() error { return r.lane(gctx, l) })
	}
	if r.async != nil {
		g.Go(func() error { return r.async.run(gctx) })
	}
	g.Go(func() error { r.pollEnds(gctx); return nil })
	g.Go(func() error { r.reportProgress(gctx); return nil })
	g.Go(func() error { return r.coordinate(gctx, first) })
	watchCtx, stopWatching := context.WithCancel(gctx)
	go r.watchStop(watchCtx, cancel)
	err = g.Wait()
	stopWatching()
	if errors.Is(context.Cause(ctx), ErrDrainTimeout) && (err == nil || errors.Is(err, context.Canceled)) {
		err = ErrDrainTimeout
	}
	return r.stats(), err
}

// wire finds sources, sinks and the consumers of every output.
func (r *run) wire() {
	for _, n := range r.plan.Nodes {
		for i, e := range n.Inputs {
			m := r.consumers[e.From]
			if m == nil {
				m = map[string][]target{}
				r.consumers[e.From] = m
			}
			m[e.Tag] = append(m[e.Tag], target{node: n, input: i})
		}
		switch impl := n.Impl.(type) {
		case component.Source:
			s := &sourceState{node: n, src: impl, req: make(chan uint64, 1), reports: make(chan barrierReport, 1)}
			for range r.lanes {
				s.out = append(s.out, make(chan item, 4))
			}
			r.sources = append(r.sources, s)
			r.bySource[n] = s
		case component.Sink:
			k := &sinkState{node: n, sink: impl, next: schemas.Offsets{}}
			r.sinks = append(r.sinks, k)
			r.bySink[n] = k
		}
	}
	for _, k := range r.sinks {
		for _, s := range r.sources {
			if r.reaches(s.node, k.node) {
				k.sources = append(k.sources, s)
				s.sinks = append(s.sinks, k)
			}
		}
	}
}

func (r *run) reaches(from, to *Node) bool {
	if from == to {
		return true
	}
	for _, ts := range r.consumers[from] {
		for _, t := range ts {
			if r.reaches(t.node, to) {
				return true
			}
		}
	}
	return false
}

// open opens the sinks, then the sources from the smallest offsets their sinks committed. It
// returns the first epoch number of this run.
func (r *run) open(ctx context.Context) (uint64, error) {
	var last uint64
	instance, err := r.prepareGroups()
	if err != nil {
		return 0, err
	}
	info := component.SinkInfo{Pipeline: r.plan.Options.Name, Lanes: r.lanes,
		EpochInterval: r.plan.EpochInterval, Instance: instance, UnknownCommit: r.cfg.UnknownCommit}
	claims := map[*sinkState]component.Occupied{} // sinks starting afresh on their target
	for _, k := range r.sinks {
		info.Shared = slices.ContainsFunc(r.grouped(), func(s *sourceState) bool { return slices.Contains(s.sinks, k) })
		var cp *component.Checkpoint
		err := r.openRetrying(ctx, k.node.Describe(), func() (err error) {
			cp, err = k.sink.Open(ctx, info)
			return err
		})
		if err != nil {
			return 0, k.node.InStage(err)
		}
		k.restored = cp
		if cp == nil {
			o, err := r.checkEmpty(ctx, k, info.Shared)
			if err != nil {
				return 0, err
			}
			if o != nil {
				claims[k] = o
			}
		}
		covered := schemas.Offsets{}
		if cp != nil {
			covered = cp.Next.Clone()
			k.next = cp.Next.Clone()
			last = max(last, cp.Epoch)
		}
		k.covered.Store(&covered)
		for l := range r.lanes {
			k.writers = append(k.writers, k.sink.Writer(l))
		}
	}
	if err := r.checkUpgrade(); err != nil {
		return 0, err
	}
	if err := r.restoreState(); err != nil {
		return 0, err
	}
	starts := map[*sourceState]schemas.Offsets{}
	for _, s := range r.sources {
		if b, ok := s.src.(component.Bounded); ok && r.cfg.StopAtEnd && !r.split.readers[s.node] {
			b.StopAtEnd()
		}
		if p, ok := s.src.(component.Paced); ok {
			p.SetEpochInterval(r.plan.EpochInterval)
		}
		var from schemas.Offsets
		// Resume from the smallest offset over the sinks that have a checkpoint. A partition
		// one of them does not hold starts at the source's default (for a new partition: its
		// start), so that sink misses nothing and the others drop what they hold. A sink with
		// no checkpoint at all is new: it starts where the others are.
		var restored []schemas.Offsets
		for _, k := range s.sinks {
			if k.restored != nil {
				restored = append(restored, *k.covered.Load())
			}
		}
		if len(restored) > 0 {
			from = schemas.Min(restored...)
		}
		if err := r.openRetrying(ctx, s.node.Describe(), func() error { return s.src.Open(ctx, from) }); err != nil {
			return 0, s.node.InStage(err)
		}
		r.logStart(s, from)
		starts[s] = from
	}
	// Before anything is written, a sink starting afresh records where it starts (where its
	// sources start), so that a crash before its first commit is not taken for lost state.
	for k, o := range claims {
		at := schemas.Offsets{}
		for _, s := range k.sources {
			at.Advance(starts[s])
		}
		if err := o.Claim(ctx, at); err != nil {
			return 0, k.node.InStage(fmt.Errorf("recording that the pipeline writes its target: %w", err))
		}
	}
	return last + 1, nil
}

func (r *run) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range r.sources {
		if err := s.src.Close(); err != nil {
			r.log.Warn("closing a source failed", "source", s.node.Name, "err", err)
		}
	}
	for _, k := range r.sinks {
		if err := k.sink.Close(ctx); err != nil {
			r.log.Warn("closing a sink failed", "sink", k.node.Name, "err", err)
		}
	}
}

// requestStop starts a graceful stop: sources stop reading and the last epoch is committed.
func (r *run) requestStop(why string) {
	if r.stopping.CompareAndSwap(false, true) {
		r.cfg.Health.setPhase("stopping (" + why + "): committing the last epoch")
		r.log.Info("stopping: committing the last epoch", "reason", why)
		r.stopRead()
		r.poke()
	}
}

func (r *run) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// watchStop turns the run's bounds and stop signal into a graceful stop, and a graceful stop
// that takes longer than the drain timeout into a forced one.
func (r *run) watchStop(ctx context.Context, cancel context.CancelCauseFunc) {
	var deadline <-chan time.Time
	if r.cfg.For > 0 {
		t := time.NewTimer(r.cfg.For)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ctx.Done():
		return
	case <-deadline:
		r.requestStop("--for elapsed")
	case <-r.cfg.Stop:
		r.requestStop("signal")
	case <-r.readCtx.Done():
	}
	t := time.NewTimer(time.Duration(r.plan.Options.DrainTimeout))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		cancel(ErrDrainTimeout)
	}
}

// readLoop reads one source and routes its batches to lanes by partition, answering
// barrier requests between reads so every batch before a barrier belongs to its epoch.
func (r *run) readLoop(ctx context.Context, s *sourceState) error {
	defer func() {
		for _, ch := range s.out {
			close(ch)
		}
	}()
	for {
		// Between reads, answer a barrier request; once the source is done or stopping,
		// wait for requests only.
		var e uint64
		var ok, asked bool
		if s.ended.Load() || r.stopping.Load() {
			select {
			case e, ok = <-s.req:
				asked = true
			case <-ctx.Done():
				return ctx.Err()
			}
		} else {
			select {
			case e, ok = <-s.req:
				asked = true
			default:
			}
		}
		if asked {
			if !ok {
				return nil
			}
			if err := r.sendBarrier(ctx, s, e); err != nil {
				return err
			}
			continue
		}
		b, err := s.read(r.readCtx)
		switch {
		case errors.Is(err, io.EOF):
			s.ended.Store(true)
			r.poke()
			continue
		case errors.Is(err, context.Canceled) && r.readCtx.Err() != nil && ctx.Err() == nil:
			continue // the read was interrupted by a graceful stop
		case err != nil:
			return s.node.InStage(err)
		case b == nil || b.Len() == 0:
			continue
		}
		if len(b.Pos) != b.Len() {
			return fmt.Errorf("%s (%s): a batch of %d records carries %d positions", s.node.Describe(), s.node.Pos, b.Len(), len(b.Pos))
		}
		r.read.Add(int64(b.Len()))
		s.records.Add(int64(b.Len()))
		s.note(b)
		s.sent = true
		select {
		case s.out[r.laneOf(b.Pos[0])] <- item{b: b}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.cfg.MaxRecords > 0 && r.read.Load() >= r.cfg.MaxRecords {
			r.requestStop("--max-records reached")
		}
	}
}

func (r *run) sendBarrier(ctx context.Context, s *sourceState, epoch uint64) error {
	next := s.withoutRevoked(s.src.Offsets().Clone())
	for _, ch := range s.out {
		select {
		case ch <- item{barrier: epoch}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.reports <- barrierReport{epoch: epoch, next: next, sent: s.sent, read: s.records.Load(), oldest: s.oldest}
	s.sent, s.oldest = false, time.Time{}
	return nil
}

func (r *run) laneOf(p schemas.Position) int {
	h := fnv.New32a()
	h.Write([]byte(p.Source))
	h.Write([]byte{byte(p.Partition), byte(p.Partition >> 8), byte(p.Partition >> 16), byte(p.Partition >> 24)})
	return int(h.Sum32() % uint32(r.lanes))
}

// coordinate cuts epochs: every trigger interval with new records (and once more at the end)
// it asks every source for a barrier, waits for every lane to pass it, and has every sink
// commit the epoch with its checkpoint before the next one is cut.
func (r *run) coordinate(ctx context.Context, epoch uint64) error {
	defer func() {
		close(r.finished)
		for _, s := range r.sources {
			close(s.req)
		}
	}()
	ticker := time.NewTicker(r.plan.EpochInterval)
	defer ticker.Stop()
	var cut int64
	var fireEmit map[*Node]component.Emit // lane 0's stages, for what the coordinator fires
	if len(r.state.nodes) > 0 {
		fireEmit = r.laneEmitters(ctx, 0)
	}
	for {
		r.cfg.Health.loop()
		select {
		case <-ticker.C:
		case <-r.wake:
		case req := <-r.revokes:
			// A barrier round now, even if the count of records read did not move: a batch
			// of the partitions may be on its way from Read, and goes before the barrier.
			var err error
			if cut, err = r.epoch(ctx, epoch, false, fireEmit); err != nil {
				return err
			}
			epoch++
			if r.async != nil { // the partitions go only once their progress is written
				if err := r.async.flush(ctx); err != nil {
					return err
				}
			}
			r.revoke(req)
			continue
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := r.lostErr(); err != nil {
			return err
		}
		read := r.read.Load()
		if err := r.endRepartition(ctx, read == cut); err != nil {
			return err
		}
		final := r.stopping.Load() || r.allEnded()
		if read == cut && !final {
			continue // nothing new: no epoch
		}
		var err error
		// Every window fires only at the end of the input, not at a stop: a streaming run
		// that stops keeps its open windows in its checkpoint for the next run.
		if cut, err = r.epoch(ctx, epoch, r.allEnded(), fireEmit); err != nil {
			return err
		}
		epoch++ // a round that committed nothing still used its number: sinks saw Flush(epoch)
		if final {
			if r.async != nil {
				return r.async.flush(ctx)
			}
			return nil
		}
	}
}

func (r *run) allEnded() bool {
	for _, s := range r.sources {
		if !s.ended.Load() {
			return false
		}
	}
	return true
}

// epoch runs one barrier round and commits its result. It commits nothing when no source
// sent a record since the previous barrier. It returns how many records the sources had read
// at the barrier, so that the next round is cut only when records came after it.
func (r *run) epoch(ctx context.Context, e uint64, final bool, fireEmit map[*Node]component.Emit) (int64, error) {
	start := time.Now()
	tr := &epochTrace{}
	if !r.roundEnd.IsZero() {
		tr.wait = start.Sub(r.roundEnd)
	}
	defer func() { r.roundEnd = time.Now() }()
	for _, s := range r.sources {
		s.req <- e
		s.interrupt()
	}
	next, oldest := map[*sourceState]schemas.Offsets{}, map[*sourceState]time.Time{}
	sent, read := false, int64(0)
	for _, s := range r.sources {
		select {
		case rep := <-s.reports:
			next[s] = rep.next
			if !rep.oldest.IsZero() {
				oldest[s] = rep.oldest
			}
			sent = sent || rep.sent
			read += rep.read
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	cut := time.Now()
	tr.cut = cut.Sub(start)
	fired, state, err := r.fire(ctx, final, next, fireEmit)
	if err != nil {
		return 0, err
	}
	for range r.lanes {
		select {
		case rep := <-r.laneDone:
			tr.flush = max(tr.flush, rep.flush)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	tr.align = time.Since(cut)
	if !sent && !fired {
		return read, nil
	}
	if err := r.lostErr(); err != nil {
		return 0, err
	}
	p := progress{epoch: e, next: next, state: state, start: start, oldest: oldest, trace: tr}
	if r.async != nil {
		return read, r.async.submit(p)
	}
	return read, r.save(ctx, p)
}

// progress is what an epoch reached: the sources' offsets at its barrier and the stateful
// transforms' state.
type progress struct {
	epoch uint64
	next  map[*sourceState]schemas.Offsets
	state []byte
	start time.Time // when the epoch's barrier round began
	// oldest is, per source, the oldest record time the progress covers (freshness).
	oldest map[*sourceState]time.Time
	trace  *epochTrace // the epoch's phases so far; save adds the commit's
}

// save has every sink commit p, then tells the sources that implement Acker.
func (r *run) save(ctx context.Context, p progress) error {
	committing := time.Now()
	if err := r.commit(ctx, p); err != nil {
		return err
	}
	acking := time.Now()
	for _, s := range r.sources {
		if a, ok := s.src.(component.Acker); ok {
			if err := a.Ack(ctx, p.next[s]); err != nil {
				r.log.Warn("acknowledging committed offsets failed", "source", s.node.Name, "err", err)
			}
		}
	}
	r.epochs.Add(1)
	took := time.Since(p.start)
	r.metrics.epochSeconds.Observe(took.Seconds())
	tr := p.trace
	tr.commit, tr.ack = acking.Sub(committing), time.Since(acking)
	r.metrics.observe(tr)
	r.log.Debug("epoch committed", append([]any{"epoch", p.epoch, "took", took.String()}, tr.attrs()...)...)
	return nil
}

// commit has every sink commit epoch e, each on its own: one sink's failure does not cancel
// another's commit half-way (which would leave its outcome unknown).
func (r *run) commit(ctx context.Context, p progress) error {
	e, next, state := p.epoch, p.next, p.state
	errs := make([]error, len(r.sinks))
	var wg sync.WaitGroup
	for i, k := range r.sinks {
		k.mu.Lock()
		from := k.next.Clone()
		for _, s := range k.sources {
			// A sink that was ahead keeps its offsets: the source resumed from the sink behind.
			k.next.Advance(next[s])
		}
		k.next.Advance(r.firedOffsets(k))
		cp := component.Commit{From: from, Fences: fences(k, next), Checkpoint: component.Checkpoint{
			Pipeline: r.plan.Options.Name, Epoch: e, Next: k.next.Clone(), State: state, Lineage: r.lineage}}
		k.mu.Unlock()
		wg.Go(func() {
			start := time.Now()
			if err := k.sink.Commit(ctx, cp); err != nil {
				errs[i] = k.node.InStage(fmt.Errorf("committing epoch %d: %w", e, err))
				return
			}
			r.metrics.committed(k, start, p.oldestFor(k))
			r.cfg.Recent.committed(k.node.Name, cp.Checkpoint)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *run) stats() *Stats {
	st := &Stats{Read: r.read.Load(), ErrorRows: r.errorRows.Load(), Epochs: int(r.epochs.Load())}
	for _, k := range r.sinks {
		ss := SinkStats{Name: k.node.Name, Rows: k.rows.Load(), Skipped: k.skipped.Load()}
		if d, ok := k.sink.(interface{ Summary() string }); ok {
			ss.Summary = d.Summary()
		}
		st.Sinks = append(st.Sinks, ss)
	}
	return st
}
