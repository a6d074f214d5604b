package embedded

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producerEpoch is one transaction of a producer, under KIP-890 (transaction.version 2, which
// kfake runs and franz-go and Java 4 clients use): the epoch goes up at the end of every
// transaction, so (id, epoch) names one transaction.
type producerEpoch struct {
	id    int64
	epoch int16
}

// openTxn is a transaction that has records in a partition and no marker after them there.
type openTxn struct {
	producerEpoch
	topic string
	part  int32
}

// marker kinds a transaction has in the log, as bits.
const (
	markedCommit = 1 << iota
	markedAbort
)

// logScan is what a read of every partition's log says about transactions.
type logScan struct {
	open   []openTxn
	marked map[producerEpoch]int // markedCommit | markedAbort
	// reused are the epochs at which a producer wrote records after a marker of the same
	// epoch: clients without KIP-890's epoch bump, whose (id, epoch) does not name one
	// transaction.
	reused map[producerEpoch]bool
	// latest is the highest epoch of each producer's records and markers.
	latest map[int64]int16
}

// partScan follows one partition's log in offset order.
type partScan struct {
	open  map[int64]int16 // producer -> epoch of its records since its last marker here
	ended map[int64]int16 // producer -> epoch of its last marker here
}

// scanLog reads every record and marker of every partition of the broker at addr
// (read_uncommitted) and returns the transactions left open and the markers written.
func scanLog(ctx context.Context, addr string) (*logScan, error) {
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	topics, err := kadm.NewClient(adm).ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the topics: %w", err)
	}
	starts, err := kadm.NewClient(adm).ListStartOffsets(ctx, topics.Names()...)
	if err != nil {
		return nil, fmt.Errorf("listing the partitions' start offsets: %w", err)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topics.Names()...)
	if err != nil {
		return nil, fmt.Errorf("listing the partitions' end offsets: %w", err)
	}
	from := map[string]map[int32]kgo.Offset{}
	left := map[string]map[int32]int64{} // the last offset still to read
	ends.Each(func(o kadm.ListedOffset) {
		start, ok := starts.Lookup(o.Topic, o.Partition)
		if o.Err != nil || !ok || start.Err != nil || start.Offset >= o.Offset {
			return
		}
		if from[o.Topic] == nil {
			from[o.Topic], left[o.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		from[o.Topic][o.Partition] = kgo.NewOffset().At(start.Offset)
		left[o.Topic][o.Partition] = o.Offset - 1
	})
	scan := &logScan{marked: map[producerEpoch]int{}, reused: map[producerEpoch]bool{}, latest: map[int64]int16{}}
	if len(from) == 0 {
		return scan, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(from), kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	parts := map[string]map[int32]*partScan{}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading the log: %w", err)
		}
		if err := fs.Err0(); err != nil {
			return nil, fmt.Errorf("reading the log: %w", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if parts[r.Topic] == nil {
				parts[r.Topic] = map[int32]*partScan{}
			}
			p := parts[r.Topic][r.Partition]
			if p == nil {
				p = &partScan{open: map[int64]int16{}, ended: map[int64]int16{}}
				parts[r.Topic][r.Partition] = p
			}
			scan.add(p, r)
			if last, ok := left[r.Topic][r.Partition]; ok && r.Offset >= last {
				delete(left[r.Topic], r.Partition)
				if len(left[r.Topic]) == 0 {
					delete(left, r.Topic)
				}
			}
		})
	}
	for topic, ps := range parts {
		for part, p := range ps {
			for id, epoch := range p.open {
				scan.open = append(scan.open, openTxn{producerEpoch{id, epoch}, topic, part})
			}
		}
	}
	return scan, nil
}

// add folds one record of partition p into the scan.
func (s *logScan) add(p *partScan, r *kgo.Record) {
	pe := producerEpoch{r.ProducerID, r.ProducerEpoch}
	if e, ok := s.latest[pe.id]; (!ok || pe.epoch > e) && r.ProducerID >= 0 {
		s.latest[pe.id] = pe.epoch
	}
	switch {
	case r.Attrs.IsControl():
		// The key of a marker is version (int16) and type (int16): 0 abort, 1 commit.
		if len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 1 {
			s.marked[pe] |= markedCommit
		} else {
			s.marked[pe] |= markedAbort
		}
		delete(p.open, pe.id)
		p.ended[pe.id] = pe.epoch
	case r.Attrs.IsTransactional():
		if ended, ok := p.ended[pe.id]; ok && ended == pe.epoch {
			s.reused[pe] = true
		}
		p.open[pe.id] = pe.epoch
	}
}

// outcome says how the open transaction o ends: committed if a commit marker of its
// transaction is in another partition (the broker stopped while writing the commit markers),
// aborted if there is none (it never committed). An error when the log cannot tell.
func (s *logScan) outcome(o openTxn) (commit bool, err error) {
	switch m := s.marked[o.producerEpoch]; {
	case m == 0, m == markedAbort:
		return false, nil
	case m == markedCommit && !s.reused[o.producerEpoch]:
		return true, nil
	}
	return false, fmt.Errorf("producer %d (epoch %d) has records in %s/%d that no marker ends, and the log cannot tell whether their transaction committed (the producer does not bump its epoch per transaction, KIP-890)",
		o.id, o.epoch, o.topic, o.part)
}
