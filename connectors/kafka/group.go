package kafka

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is ReadFromKafka as a member of a consumer group (docs/scaling.md): with group.id,
// copies of a pipeline share the partitions of its topics. The group may move partitions at
// any time; the runner's Rebalancer makes each move lose and duplicate nothing:
//   - a partition given to this copy starts where the sinks committed it, read anew;
//   - a partition taken away is first committed by every sink, up to the last record read.
// Cooperative-sticky assignment moves only the partitions that must move.

// groupEndCheck is how often a grouped source with StopAtEnd checks whether its partitions
// reached their end while no records come.
const groupEndCheck = 250 * time.Millisecond

// leaveTimeout bounds how long closing a group member waits for the group to let it go. A
// broker that does not answer (down, frozen, or holding a join in the middle of a rebalance
// for up to the rebalance timeout) must not keep a stopping copy alive past its drain timeout.
var leaveTimeout = 5 * time.Second

// defaultSession is franz-go's session timeout when session.timeout.ms is not set.
const defaultSession = 45 * time.Second

// Group returns the consumer group the source reads in, or "".
func (s *source) Group() string { return s.set.group }

// SetRebalancer makes the source join its group when it opens.
func (s *source) SetRebalancer(r component.Rebalancer) { s.rebalancer = r }

// Member returns the member id and generation of the source in its group.
func (s *source) Member() (string, int32) {
	if s.cl == nil {
		return "", -1
	}
	return s.cl.GroupMetadata()
}

func (s *source) grouped() bool { return s.rebalancer != nil && s.set.group != "" }

// openGroup joins the group. Partitions are read once assigned, from where adjust says.
func (s *source) openGroup(ctx context.Context) error {
	pos, err := s.listPositions(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.offsets, s.ends, s.buffered, s.handedOver, s.joined, s.starts = schemas.Offsets{}, nil, nil, map[component.Partition]bool{}, false, nil
	s.ownedSince = map[component.Partition]int32{}
	s.setEnds(pos)
	s.mu.Unlock()
	opts := append(s.set.consumerOpts(),
		kgo.ConsumerGroup(s.set.group),
		kgo.ConsumeTopics(s.topics...),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.AdjustFetchOffsetsFn(s.adjust),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, assigned map[string][]int32) { s.assigned(cl, assigned) }),
		kgo.OnPartitionsRevoked(s.revoked),
		kgo.OnPartitionsLost(s.lost),
	)
	if s.set.session > 0 {
		opts = append(opts, kgo.SessionTimeout(s.set.session))
	}
	// The client's own context, which closeMember cancels when leaving takes too long: that
	// fails the requests in flight (a join the broker holds, the leave itself) at once.
	ctx, cancel := context.WithCancel(context.Background())
	opts = append(opts, s.set.metrics.hooks()...)
	if s.cl, err = s.set.newClient(append(opts, kgo.WithContext(ctx))...); err != nil {
		cancel()
		return err
	}
	s.cancelMember = cancel
	return nil
}

// closeMember closes the group consumer. Close leaves the group, so that other copies get
// its partitions at once; when the broker does not let it go within leaveTimeout, the copy
// closes without leaving, and the group moves its partitions when its session expires.
func (s *source) closeMember() {
	members.Range(func(id, m any) bool {
		if m == s {
			members.Delete(id)
		}
		return true
	})
	cl, cancel := s.cl, s.cancelMember
	s.cancelMember = nil
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl.Close()
	}()
	t := time.NewTimer(leaveTimeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	member, _ := cl.GroupMetadata()
	cancel()
	if err := s.leaveFor(member); err == nil {
		slog.Warn(fmt.Sprintf("left consumer group %q without handing its partitions over: the broker did not let this copy go within %v (a rebalance held it); it was removed from the group, so other copies get its partitions when the group is next balanced",
			s.set.group, leaveTimeout), "source", s.what, "group", s.set.group)
	} else {
		session := s.set.session
		if session <= 0 {
			session = defaultSession
		}
		slog.Warn(fmt.Sprintf("left consumer group %q without handing its partitions over: the broker did not answer within %v (%v); other copies get them once this copy's session (session.timeout.ms, %v) expires",
			s.set.group, leaveTimeout, err, session), "source", s.what, "group", s.set.group, "partitions_move_in", session.String())
	}
	select {
	case <-done:
	case <-time.After(time.Second):
		// Only the client's goroutines are left, which no longer hold anything.
	}
}

// members finds the group members of this process by member id: a transaction fenced with a
// generation that a rebalance has replaced since asks its member whether the copy still owns
// what it commits (groupFencer.commit).
var members sync.Map // member id -> *source

// assigned records the partitions the group gave this copy and the generation they came in.
func (s *source) assigned(cl *kgo.Client, m map[string][]int32) {
	member, gen := cl.GroupMetadata()
	parts := s.partitions(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.joined = true
	for _, p := range parts {
		s.ownedSince[p] = gen
	}
	if member != "" {
		members.Store(member, s)
	}
}

// stillOwns returns the copy's current generation when member is still its member id and it
// has owned every partition of offsets since generation gen or earlier: then no other copy
// can have had them in between, and committing their offsets with the current generation is
// what a commit that started after the rebalance would have done. A cooperative rebalance
// that only adds partitions to this copy (another copy left or died) moves the generation
// under a commit in flight; without this the copy would take itself for fenced and stop.
func (s *source) stillOwns(member string, gen int32, offsets schemas.Offsets) (int32, bool) {
	current, currentGen := s.Member()
	if current != member || currentGen <= gen {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for src, parts := range offsets {
		for p := range parts {
			if since, ok := s.ownedSince[component.Partition{Source: src, Partition: p}]; !ok || since > gen {
				return 0, false
			}
		}
	}
	return currentGen, true
}

// currentGeneration returns the generation to commit f's offsets with after the group refused
// f.Generation: the member's current one when it still owns them (stillOwns).
func currentGeneration(f component.GroupFence) (int32, bool) {
	m, ok := members.Load(f.MemberID)
	if !ok {
		return 0, false
	}
	return m.(*source).stillOwns(f.MemberID, f.Generation, f.Offsets)
}

// adjust sets where newly assigned partitions start: where the sinks committed them (the
// runner reads their checkpoints again), else as at Open without a checkpoint.
func (s *source) adjust(ctx context.Context, assigned map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	topics := map[string][]int32{}
	for topic, ps := range assigned {
		for p := range ps {
			topics[topic] = append(topics[topic], p)
		}
	}
	parts := s.partitions(topics)
	from, err := s.rebalancer.Assigned(ctx, parts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	pos, err := s.listPositions(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	out := map[string]map[int32]kgo.Offset{}
	var starts []component.Start
	for topic, ps := range assigned {
		out[topic] = map[int32]kgo.Offset{}
		for p := range ps {
			st, err := s.startOf(pos, from, topic, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.what, err)
			}
			out[topic][p] = kgo.NewOffset().At(st.Offset)
			starts = append(starts, st)
		}
	}
	// The run's start line could not say where these start: they came after it.
	why, at, backlog := component.DescribeStarts(starts)
	slog.Info("where the partitions assigned to this copy start: "+why, "component", s.what, "at", at, "backlog_records", backlog)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range starts {
		s.offsets.Set(st.Source, st.Partition.Partition, st.Offset) // a partition coming back starts over where the sinks are
		delete(s.handedOver, st.Partition)
		s.starts = slices.DeleteFunc(s.starts, func(o component.Start) bool { return o.Partition == st.Partition })
		s.starts = append(s.starts, st)
	}
	return out, nil
}

// revoked hands partitions over: their records are no longer returned, and the callback
// returns, letting the group move them, once every sink committed what was read of them.
func (s *source) revoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	parts := s.handOver(revoked)
	if len(parts) == 0 {
		return
	}
	if err := s.rebalancer.Revoked(ctx, parts); err != nil {
		// Not committed: what was read of them must not be committed later either.
		s.rebalancer.Lost(parts, fmt.Errorf("handing them over: %w", err))
	}
	s.forget(parts)
}

// lost gives partitions up that the group already took away (the session expired).
func (s *source) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	parts := s.handOver(lost)
	if len(parts) == 0 {
		return
	}
	s.rebalancer.Lost(parts, nil)
	s.forget(parts)
}

// handOver stops returning the records of the partitions and drops those buffered.
func (s *source) handOver(m map[string][]int32) []component.Partition {
	parts := s.partitions(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range parts {
		s.handedOver[p] = true
		delete(s.ownedSince, p)
	}
	s.buffered = slices.DeleteFunc(s.buffered, func(c chunk) bool {
		return s.handedOver[component.Partition{Source: sourceName(c.topic), Partition: c.partition}]
	})
	return parts
}

// forget removes handed-over partitions from the offsets.
func (s *source) forget(parts []component.Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range parts {
		s.offsets.Delete(p.Source, p.Partition)
	}
}

// leaveFor asks the broker, through the admin client, to remove member from the group: the
// consumer's own leave waits behind its join, which the broker may hold for a whole rebalance.
func (s *source) leaveFor(member string) error {
	if member == "" || s.admin == nil {
		return fmt.Errorf("not a member yet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = s.set.group, member
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID, m.Reason = member, kmsg.StringPtr("closing: the group did not let the member go in time")
	req.Members = append(req.Members, m)
	resp, err := req.RequestWith(ctx, s.admin)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

// partitions lists the partitions of topics, in order.
func (s *source) partitions(topics map[string][]int32) []component.Partition {
	var parts []component.Partition
	for topic, ps := range topics {
		for _, p := range ps {
			parts = append(parts, component.Partition{Source: sourceName(topic), Partition: p})
		}
	}
	slices.SortFunc(parts, func(a, b component.Partition) int {
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return parts
}

// groupAtEnd reports, with StopAtEnd, whether the group assigned partitions and every one of
// them reached where it ended at Open.
func (s *source) groupAtEnd() bool {
	if !s.joined {
		return false
	}
	for p := range s.ownedSince {
		if _, ok := s.offsets.Get(p.Source, p.Partition); !ok {
			return false // assigned, but adjust has not said where it starts yet
		}
	}
	for src, ps := range s.offsets {
		for p, next := range ps {
			if end, ok := s.ends.Get(src, p); ok && next < end {
				return false
			}
		}
	}
	return true
}

// commitGroup commits the offsets of the partitions this member holds to the group, with its
// generation, so lag tools see progress. The sinks' checkpoints stay the truth: a commit
// refused in the middle of a rebalance is only logged by the runner.
func (s *source) commitGroup(ctx context.Context, committed schemas.Offsets) error {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	for _, topic := range s.topics {
		for p, next := range committed[sourceName(topic)] {
			if offsets[topic] == nil {
				offsets[topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: next}
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	var commitErr error
	s.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && commitErr == nil {
					commitErr = fmt.Errorf("topic %s partition %d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	if commitErr != nil {
		return fmt.Errorf("%s: committing offsets to group %q: %w", s.what, s.set.group, commitErr)
	}
	return nil
}
