package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sourcePrefix starts the Position.Source of every Kafka record: "kafka:" + topic.
const sourcePrefix = "kafka:"

// source reads every partition of its topics, or with group.id in a run, those the consumer
// group gives it. Open, Read, Offsets and Close run on one goroutine; Decode runs on many; Ack
// on the runner's coordinator; rebalance callbacks on the client's.
type source struct {
	out        *schemas.Schema // the rows' schema: the format's, plus metadata fields
	metadata   bool            // with_metadata: rows carry the records' metadata
	what       string          // the component, for messages
	topics     []string        // as configured, or those matching pattern when the source opens
	pattern    *regexp.Regexp  // topic_pattern, anchored, or nil
	patternSrc string          // topic_pattern as written, for messages
	set        *settings
	format     formats.Reading
	errOut     *component.ErrorOutput
	pool       sync.Pool // of formats.Decoder
	maxRecords int64
	maxTime    time.Duration
	stopAtEnd  bool
	grown      atomic.Pointer[grownSchema] // with follow_schema_updates: out grown (follow.go)

	admin    *kgo.Client // metadata, offsets and group commits
	adm      *kadm.Client
	cl       *kgo.Client // the consumer
	deadline time.Time
	returned int64

	// rebalancer, set by a run with group.id, makes the source a member of the consumer
	// group (group.go).
	rebalancer component.Rebalancer
	// cancelMember cancels the context of the group consumer's client (closeMember).
	cancelMember context.CancelFunc

	// mu guards the fields below: group rebalances change them while Read runs.
	mu         sync.Mutex
	buffered   []chunk                       // fetched records not returned yet, in fetch order
	offsets    schemas.Offsets               // next offset of every partition, for Offsets
	ends       schemas.Offsets               // with StopAtEnd: where each partition ends
	starts     []component.Start             // where each partition started, and why (Starts)
	handedOver map[component.Partition]bool  // given up in a rebalance: records dropped
	joined     bool                          // in a group: the first assignment happened
	ownedSince map[component.Partition]int32 // in a group: the generation each owned partition came in
}

// chunk is what one poll fetched from one partition and Read has not returned yet.
type chunk struct {
	topic     string
	partition int32
	recs      []*kgo.Record
}

func newSource(what string, topics []string, set *settings, format formats.Reading, errOut *component.ErrorOutput) *source {
	s := &source{what: what, topics: topics, set: set, format: format, out: format.Schema, errOut: errOut}
	s.pool.New = func() any { return format.NewDecoder() }
	return s
}

// StopAtEnd makes Read end at the records that exist when Open runs (committed ones, with
// read_committed).
func (s *source) StopAtEnd() { s.stopAtEnd = true }

// SetEpochInterval bounds how long a fetch waits for more records by the epoch interval
// (component.Paced; batchFetchWait).
func (s *source) SetEpochInterval(d time.Duration) { s.set.epoch = d }

// Open assigns every partition of the topics, each starting at its offset in from, else at the
// committed offset of group.id, else at auto_offset_reset. It checks that the offsets it
// resumes from still exist. In a run with group.id, the source joins the consumer group
// instead and starts each partition it is given where the sinks committed it (group.go).
func (s *source) Open(ctx context.Context, from schemas.Offsets) error {
	if err := s.Close(); err != nil {
		return err
	}
	admin, err := s.set.newClient()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.admin, s.adm = admin, kadm.NewClient(admin)
	s.mu.Unlock()
	if s.pattern != nil {
		err = s.matchTopics(ctx)
	}
	switch {
	case err != nil:
	case s.grouped():
		err = s.openGroup(ctx)
	default:
		var assign map[string]map[int32]kgo.Offset
		if assign, err = s.plan(ctx, from); err == nil {
			opts := append(s.set.consumerOpts(), kgo.ConsumePartitions(assign))
			s.cl, err = s.set.newClient(append(opts, s.set.metrics.hooks()...)...)
		}
	}
	if err != nil {
		s.Close()
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.deadline = time.Time{}
	if s.maxTime > 0 {
		s.deadline = time.Now().Add(s.maxTime)
	}
	s.returned = 0
	return nil
}

// sourceName is the Position.Source of the records of topic.
func sourceName(topic string) string { return sourcePrefix + topic }

// matchTopics sets the topics to those whose name matches the pattern now (internal topics,
// named __*, excepted).
func (s *source) matchTopics(ctx context.Context) error {
	topics, err := s.matching(ctx, s.adm)
	if err == nil {
		s.topics = topics
	}
	return err
}

// matching returns the topics whose name matches the pattern now, sorted.
func (s *source) matching(ctx context.Context, adm *kadm.Client) ([]string, error) {
	all, err := adm.ListTopics(ctx)
	if err == nil {
		err = all.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the topics to match topic_pattern %q: %w", s.patternSrc, err)
	}
	var topics []string
	for _, name := range all.Names() {
		if !strings.HasPrefix(name, "__") && s.pattern.MatchString(name) {
			topics = append(topics, name)
		}
	}
	if len(topics) == 0 {
		return nil, fmt.Errorf("no topic matches topic_pattern %q (topics: %s)", s.patternSrc, strings.Join(all.Names(), ", "))
	}
	slices.Sort(topics)
	return topics, nil
}

// positions is what the broker says of the topics' partitions when reading starts.
type positions struct {
	counts            map[string]int32
	starts, hwms, end kadm.ListedOffsets // end: the high watermark, or the last stable offset with read_committed
	group             kadm.OffsetResponses
}

// listPositions lists the partitions of the topics (creating the topics if allowed), their
// start and end offsets, and the committed offsets of group.id.
func (s *source) listPositions(ctx context.Context) (*positions, error) {
	counts, err := partitionCounts(ctx, s.set, s.admin, s.topics, s.set.autoCreate)
	if err != nil {
		return nil, err
	}
	pos := &positions{counts: counts}
	if pos.starts, err = s.adm.ListStartOffsets(ctx, s.topics...); err == nil {
		err = pos.starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the start offsets of %v: %w", s.topics, err)
	}
	if pos.hwms, err = s.adm.ListEndOffsets(ctx, s.topics...); err == nil {
		err = pos.hwms.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the end offsets of %v: %w", s.topics, err)
	}
	pos.end = pos.hwms
	if s.set.readCommitted {
		if pos.end, err = s.adm.ListCommittedOffsets(ctx, s.topics...); err == nil {
			err = pos.end.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("listing the last stable offsets of %v: %w", s.topics, err)
		}
	}
	if s.set.group != "" {
		pos.group, err = s.adm.FetchOffsetsForTopics(ctx, s.set.group, s.topics...)
		if errors.Is(err, kerr.GroupIDNotFound) {
			err = nil // a new group: nothing committed
		}
		if err != nil {
			return nil, fmt.Errorf("fetching the committed offsets of group %q: %w", s.set.group, err)
		}
	}
	return pos, nil
}

// startOf returns where partition p of topic starts, resuming from from, and why.
func (s *source) startOf(pos *positions, from schemas.Offsets, topic string, p int32) (component.Start, error) {
	start, _ := pos.starts.Lookup(topic, p)
	hwm, _ := pos.hwms.Lookup(topic, p)
	end, _ := pos.end.Lookup(topic, p)
	at, why, err := s.startAt(from, pos.group, topic, p, start.Offset, hwm.Offset, end.Offset)
	return component.Start{Partition: component.Partition{Source: sourceName(topic), Partition: p},
		Offset: at, From: why, End: end.Offset}, err
}

// plan decides where each partition starts.
func (s *source) plan(ctx context.Context, from schemas.Offsets) (map[string]map[int32]kgo.Offset, error) {
	pos, err := s.listPositions(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offsets, s.ends, s.buffered, s.starts = schemas.Offsets{}, nil, nil, nil
	s.setEnds(pos)
	assign := map[string]map[int32]kgo.Offset{}
	for _, topic := range s.topics {
		assign[topic] = map[int32]kgo.Offset{}
		for p := range pos.counts[topic] {
			st, err := s.startOf(pos, from, topic, p)
			if err != nil {
				return nil, err
			}
			assign[topic][p] = kgo.NewOffset().At(st.Offset)
			s.offsets.Set(sourceName(topic), p, st.Offset)
			s.starts = append(s.starts, st)
		}
	}
	return assign, nil
}

// setEnds records, with StopAtEnd, where every partition ends.
func (s *source) setEnds(pos *positions) {
	if !s.stopAtEnd {
		return
	}
	s.ends = schemas.Offsets{}
	for _, topic := range s.topics {
		for p := range pos.counts[topic] {
			end, _ := pos.end.Lookup(topic, p)
			s.ends.Set(sourceName(topic), p, end.Offset)
		}
	}
}

// startAt returns where partition p of topic starts, and why, given its log start, high
// watermark and end (last stable offset with read_committed).
func (s *source) startAt(from schemas.Offsets, group kadm.OffsetResponses, topic string, p int32, start, hwm, end int64) (int64, component.StartFrom, error) {
	if at, ok := from.Get(sourceName(topic), p); ok {
		switch {
		case at > hwm:
			return 0, "", fmt.Errorf("the checkpoint resumes topic %s partition %d at offset %d, but the partition ends at offset %d: the topic was deleted and recreated, or lost records; give the pipeline a new options.name to start over", topic, p, at, hwm)
		case at < start:
			return 0, "", fmt.Errorf("the checkpoint resumes topic %s partition %d at offset %d, but its oldest record is at offset %d: records %d to %d were deleted (retention) before they were read; give the pipeline a new options.name to start over", topic, p, at, start, at, start-1)
		}
		return at, component.StartCheckpoint, nil
	}
	if o, ok := group.Lookup(topic, p); ok && o.Err == nil && o.At >= start && o.At <= hwm {
		return o.At, component.StartGroup, nil
	}
	if _, resuming := from[sourceName(topic)]; resuming || (s.pattern != nil && len(from) > 0) {
		// The checkpoints know the topic but not this partition: it was added (or got its
		// first records) after the last commit, so everything in it is new to the pipeline.
		// So is a topic that came to match topic_pattern since the pipeline last ran.
		return start, component.StartNew, nil
	}
	switch s.set.reset {
	case "earliest":
		return start, component.StartEarliest, nil
	case "none":
		return 0, "", fmt.Errorf("topic %s partition %d has no checkpoint and no committed offset, and auto.offset.reset is none", topic, p)
	}
	return end, component.StartLatest, nil
}

// Offsets returns the next offset of every partition: where it started, or after the last
// record Read returned.
func (s *source) Offsets() schemas.Offsets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offsets.Clone()
}

// Read returns the next records of one partition, waiting for some until ctx is done. It
// returns io.EOF once max_num_records were returned or max_read_time_seconds passed, and with
// StopAtEnd once every partition reached where it ended at Open.
func (s *source) Read(ctx context.Context) (*schemas.Batch, error) {
	if s.cl == nil {
		return nil, fmt.Errorf("%s: read before open", s.what)
	}
	for {
		if s.maxRecords > 0 && s.returned >= s.maxRecords {
			return nil, io.EOF
		}
		if !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
			return nil, io.EOF
		}
		b, atEnd := s.next()
		if b != nil {
			return b, nil
		}
		if atEnd {
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		s.mu.Lock()
		ending := s.ends != nil // EndNow sets it while reading (repartition.go)
		s.mu.Unlock()
		switch {
		case !s.deadline.IsZero():
			pctx, cancel = context.WithDeadline(ctx, s.deadline)
		case ending:
			// The group may assign partitions that are already at their end, or none: look
			// again at the end now and then, as no record may come to end the poll.
			pctx, cancel = context.WithTimeout(ctx, groupEndCheck)
		}
		fs := s.cl.PollRecords(pctx, s.set.maxPoll)
		cancel()
		// Keep what the poll fetched before looking at its errors: the client's positions
		// have moved past these records, so dropping them would lose them.
		s.mu.Lock()
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) > 0 && !s.handedOver[component.Partition{Source: sourceName(p.Topic), Partition: p.Partition}] {
				s.buffered = append(s.buffered, chunk{topic: p.Topic, partition: p.Partition, recs: p.Records})
			}
		})
		s.mu.Unlock()
		if err := s.fetchError(fs, pctx); err != nil {
			return nil, err
		}
	}
}

// fetchError returns the first error of a poll, other than the end of pctx.
func (s *source) fetchError(fs kgo.Fetches, pctx context.Context) error {
	for _, e := range fs.Errors() {
		switch {
		case pctx.Err() != nil && (errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)):
			continue
		case errors.Is(e.Err, kgo.ErrClientClosed):
			return fmt.Errorf("%s: read after close", s.what)
		case s.grouped() && errors.As(e.Err, new(*kgo.ErrGroupSession)):
			// The group dropped this member (it stalled past its session, so another copy
			// owns its partitions now); which error the client reports first, this or the
			// lost partitions, depends on timing. Either way nothing read since the last
			// commit may be committed.
			return fmt.Errorf("%s: lost its partitions: the consumer group %q no longer knows this copy (%w); stopping without committing what was read since the last commit: the next run resumes from there", s.what, s.set.group, e.Err)
		case e.Topic == "":
			return fmt.Errorf("%s: %w", s.what, e.Err)
		}
		return fmt.Errorf("%s: reading topic %s partition %d: %w", s.what, e.Topic, e.Partition, e.Err)
	}
	return nil
}

// next returns the next batch of buffered records, if any, or whether every partition reached
// where it ends with StopAtEnd.
func (s *source) next() (*schemas.Batch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.take(); b != nil {
		return b, false
	}
	return nil, s.ends != nil && s.atEnd()
}

// take returns the next batch from the fetched records: the records of the first buffered
// chunk, up to what max_num_records leaves, without control records (transaction markers),
// which only move the partition's offset on.
func (s *source) take() *schemas.Batch {
	for len(s.buffered) > 0 {
		c := &s.buffered[0]
		src := sourceName(c.topic)
		end, bounded := s.ends.Get(src, c.partition)
		limit := len(c.recs)
		if s.maxRecords > 0 {
			limit = int(min(int64(limit), s.maxRecords-s.returned))
		}
		b := &schemas.Batch{Schema: s.format.Schema, Raw: make([][]byte, 0, limit),
			Pos: make([]schemas.Position, 0, limit), Time: make([]time.Time, 0, limit)}
		next, used := int64(-1), 0
		var recs []*kgo.Record // with metadata: the records of b.Raw
		for _, r := range c.recs {
			if bounded && r.Offset >= end {
				// Past where the partition ended at Open: drop the rest. Everything before
				// was returned or is not visible (aborted), so the partition is done.
				used, next = len(c.recs), end
				break
			}
			if !r.Attrs.IsControl() {
				if len(b.Raw) == limit {
					break
				}
				b.Raw = append(b.Raw, r.Value)
				if s.metadata {
					recs = append(recs, r)
				}
				b.Pos = append(b.Pos, schemas.Position{Source: src, Partition: c.partition, Offset: r.Offset})
				b.Time = append(b.Time, r.Timestamp.UTC())
			}
			next = r.Offset + 1
			used++
		}
		c.recs = c.recs[used:]
		if next >= 0 {
			s.offsets.Set(src, c.partition, next)
		}
		if len(c.recs) == 0 {
			s.buffered[0] = chunk{}
			s.buffered = s.buffered[1:]
		}
		if len(b.Raw) > 0 {
			s.returned += int64(len(b.Raw))
			if s.metadata {
				b.Meta = recs
			}
			return b
		}
		if limit == 0 {
			return nil
		}
	}
	return nil
}

// atEnd reports whether every partition reached where it ended at Open; in a group, every
// partition assigned, once assigned.
func (s *source) atEnd() bool {
	if s.grouped() {
		return s.groupAtEnd()
	}
	for src, parts := range s.ends {
		for p, end := range parts {
			if next, _ := s.offsets.Get(src, p); next < end {
				return false
			}
		}
	}
	return true
}

// Decode turns record values into rows on the Main output; values that fail go to the error
// output, or stop the pipeline at their position when there is none. A schema registry that
// cannot be reached stops the pipeline: it is not the record's fault, and the record is read
// again on the next run.
func (s *source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	dec := s.pool.Get().(formats.Decoder)
	defer s.pool.Put(dec)
	if s.format.Current != nil {
		emit = s.growing(emit)
	}
	return component.DecodeBatch(b, s.out, s.errOut, emit, func(i int, raw []byte) (schemas.Row, error) {
		row, err := dec(raw)
		switch {
		case errors.Is(err, confluent.ErrUnavailable):
			return nil, &component.NotTheRecord{Err: fmt.Errorf("%s: %w", s.what, err)}
		case err != nil:
			return nil, err
		case s.metadata:
			row = s.withMetadata(row, b.Meta.([]*kgo.Record)[i])
		}
		return row, nil
	})
}

// Ack commits the committed offsets of the topics to group.id, when it is set, so that lag
// tools see the pipeline's progress. The checkpoints stay the truth.
func (s *source) Ack(ctx context.Context, committed schemas.Offsets) error {
	if s.set.group == "" || s.adm == nil {
		return nil
	}
	if s.grouped() {
		return s.commitGroup(ctx, committed)
	}
	offsets := kadm.Offsets{}
	for _, topic := range s.topics {
		for p, next := range committed[sourceName(topic)] {
			offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: next, LeaderEpoch: -1})
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	resp, err := s.adm.CommitOffsets(ctx, s.set.group, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("%s: committing offsets to group %q: %w", s.what, s.set.group, err)
	}
	return nil
}

// Close closes the clients; a closed source can be opened again.
func (s *source) Close() error {
	switch {
	case s.cl != nil && s.cancelMember != nil:
		s.closeMember()
	case s.cl != nil:
		s.cl.Close()
	}
	s.cl = nil
	s.mu.Lock()
	admin := s.admin
	s.admin, s.adm, s.buffered = nil, nil, nil
	s.mu.Unlock()
	if admin != nil {
		admin.Close()
	}
	s.format.Close()
	return nil
}

// Identity is what the source's offsets belong to: its topics (or pattern) and its group.
func (s *source) Identity() []string {
	var id []string
	if s.pattern != nil {
		id = append(id, "kafka topic_pattern "+s.patternSrc)
	} else {
		for _, t := range s.topics {
			id = append(id, "kafka topic "+t)
		}
	}
	if s.set.group != "" {
		id = append(id, "kafka group "+s.set.group)
	}
	return id
}
