package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/component"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupFencer commits consumer-group offsets inside the open transaction of one transactional
// producer, with the copy's generation (KIP-447, as GroupTransactSession does for one client).
// A copy that lost its partitions without knowing it has a stale generation: the group
// coordinator refuses, and the transaction must be aborted. WriteToKafka's epochs and the
// checkpoint store's saves (store.go) commit through one.
type groupFencer struct {
	txnID string

	mu  sync.Mutex
	ids map[string][16]byte // topic -> id, looked up once
}

// commit commits the offsets of fences to their groups in cl's open transaction; it fails with
// component.ErrFencedCopy when a group refuses this copy's generation.
func (g *groupFencer) commit(ctx context.Context, cl *kgo.Client, fences []component.GroupFence) error {
	if len(fences) == 0 {
		return nil
	}
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("the transactional producer's id: %w", err)
	}
	txnID := g.txnID
	for _, f := range fences {
		if f.MemberID == "" || f.Generation < 0 {
			// The client dropped its membership: it learned that its session ended. A
			// commit without a generation would pass as an administrator's; refuse it.
			return fmt.Errorf("%w (group %q: no longer a member)", component.ErrFencedCopy, f.Group)
		}
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID, id, epoch, f.Group
		resp, err := add.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			return fmt.Errorf("adding the offsets of group %q to the transaction: %w", f.Group, err)
		}
		ids, err := g.topicIDs(ctx, cl, f)
		if err != nil {
			return err
		}
		gen := f.Generation
		for {
			err := commitOffsets(ctx, cl, txnID, id, epoch, f, gen, ids)
			if !errors.Is(err, kerr.IllegalGeneration) {
				if err != nil && fencedErr(err) {
					return fmt.Errorf("%w (group %q, generation %d: %v)", component.ErrFencedCopy, f.Group, gen, err)
				}
				if err != nil {
					return err
				}
				break
			}
			// A rebalance moved the generation under this commit. When the copy kept every
			// partition it commits, the commit goes on with the new generation, in the same
			// transaction (the refused request changed nothing); else the copy is fenced.
			next, ok := currentGeneration(f)
			if !ok || next <= gen {
				return fmt.Errorf("%w (group %q, generation %d: %v)", component.ErrFencedCopy, f.Group, gen, err)
			}
			gen = next
		}
	}
	return nil
}

// commitOffsets commits f's offsets in the open transaction with generation gen.
func commitOffsets(ctx context.Context, cl *kgo.Client, txnID string, id int64, epoch int16, f component.GroupFence, gen int32, ids map[string][16]byte) error {
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.ProducerID, commit.ProducerEpoch = txnID, id, epoch
	commit.Group, commit.MemberID, commit.Generation = f.Group, f.MemberID, gen
	for src, parts := range f.Offsets {
		topic, ok := topicOf(src)
		if !ok {
			continue
		}
		t := kmsg.NewTxnOffsetCommitRequestTopic()
		t.Topic, t.TopicID = topic, ids[topic] // by name up to v5, by id from v6
		for p, next := range parts {
			tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			tp.Partition, tp.Offset, tp.LeaderEpoch = p, next, -1
			t.Partitions = append(t.Partitions, tp)
		}
		commit.Topics = append(commit.Topics, t)
	}
	resp, err := commit.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("committing offsets to group %q in the transaction: %w", f.Group, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				if fencedErr(err) {
					return err
				}
				return fmt.Errorf("committing offsets to group %q in the transaction, topic %s partition %d: %w", f.Group, t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// fencedErr reports the group's answers that say this copy's membership is not current.
func fencedErr(err error) bool {
	return errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.UnknownMemberID) ||
		errors.Is(err, kerr.FencedInstanceID) || errors.Is(err, kerr.StaleMemberEpoch)
}

// topicIDs returns the ids of the topics of f, which TxnOffsetCommit v6+ names them by. They
// are looked up once per fencer: a topic recreated meanwhile has another id, and the commit
// then fails rather than commit offsets of the old topic to the new one.
func (g *groupFencer) topicIDs(ctx context.Context, cl *kgo.Client, f component.GroupFence) (map[string][16]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ids == nil {
		g.ids = map[string][16]byte{}
	}
	var missing []string
	for src := range f.Offsets {
		if topic, ok := topicOf(src); ok {
			if _, known := g.ids[topic]; !known {
				missing = append(missing, topic)
			}
		}
	}
	if len(missing) > 0 {
		details, err := kadm.NewClient(cl).ListTopics(ctx, missing...)
		if err == nil {
			err = details.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("looking up the ids of topics %v: %w", missing, err)
		}
		for _, d := range details {
			g.ids[d.Topic] = d.ID
		}
	}
	return g.ids, nil
}

// topicOf returns the topic of a Kafka source's Position.Source.
func topicOf(src string) (string, bool) {
	if len(src) <= len(sourcePrefix) || src[:len(sourcePrefix)] != sourcePrefix {
		return "", false
	}
	return src[len(sourcePrefix):], true
}
