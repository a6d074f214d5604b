package embedded

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cleanFile is in a data directory whose broker stopped cleanly (kfake saved its state). A
// broker removes it when it starts on the directory and writes it back when it is closed: a
// directory with data and without it was left by a broker that was killed, or by a process
// that exited without closing it (and by sluice before this file existed).
const cleanFile = "sluice-clean-shutdown"

// recoverTimeout bounds the recovery of a data directory.
const recoverTimeout = 2 * time.Minute

// Recovery is what Start did to a data directory that a broker had not closed.
type Recovery struct {
	Aborted   int // transactions left open, now ended by an abort marker
	Committed int // transactions whose commit was cut short, now committed in every partition
}

func (r *Recovery) String() string {
	return fmt.Sprintf("the broker on this directory had not stopped cleanly: %d open transaction(s) aborted, %d interrupted commit(s) completed", r.Aborted, r.Committed)
}

// ErrUnrecoverable is returned by Start for a data directory whose log cannot be made
// consistent.
var ErrUnrecoverable = errors.New("the broker's data cannot be recovered")

// recoverDir makes the log in dir consistent after a broker that did not stop cleanly.
//
// kfake replays such a log by dropping every transaction that has records and no marker at
// the end of a partition, without writing the abort marker that read_committed clients need:
// they then skip every later transactional batch of that producer, committed ones included.
// And a broker killed inside EndTxn leaves a transaction committed in some partitions and
// dropped in the others. So before serving the log, recoverDir starts the broker on a private
// port, reads every partition, and writes the missing markers: commit where the transaction's
// commit marker is already in another partition, abort otherwise. docs/kafka.md, "The dev
// broker after a crash", has the details.
func recoverDir(dir string) (*Recovery, error) {
	// A partition whose snapshot.json still matches its segments (written by the last clean
	// stop, nothing appended since) is loaded from it, without looking for open
	// transactions: remove them so that every partition is replayed from its segments.
	if err := removeSnapshots(dir); err != nil {
		return nil, err
	}
	if err := trimUnindexed(dir); err != nil {
		return nil, err
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SyncWrites())
	if err != nil {
		return nil, fmt.Errorf("replaying the log: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), recoverTimeout)
	defer cancel()
	rec, err := endOpenTxns(ctx, c.ListenAddrs()[0])
	c.Close()
	if err != nil {
		return nil, err
	}
	// The clean stop above saved snapshots that still count the completed commits as
	// aborted; the broker that serves the log replays the markers instead.
	return rec, removeSnapshots(dir)
}

// endOpenTxns writes a marker after every transaction left open in the broker at addr.
func endOpenTxns(ctx context.Context, addr string) (*Recovery, error) {
	scan, err := scanLog(ctx, addr)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rec := &Recovery{}
	if len(scan.open) == 0 {
		return rec, fenceProducers(ctx, cl, scan, nil)
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	counted := map[producerEpoch]bool{}
	for _, o := range scan.open {
		commit, err := scan.outcome(o)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnrecoverable, err)
		}
		if !counted[o.producerEpoch] {
			counted[o.producerEpoch] = true
			if commit {
				rec.Committed++
			} else {
				rec.Aborted++
			}
		}
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = o.id, o.epoch, commit
		t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		t.Topic, t.Partitions = o.topic, []int32{o.part}
		m.Topics = append(m.Topics, t)
		req.Markers = append(req.Markers, m)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("writing transaction markers: %w", err)
	}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("writing the marker of producer %d to %s/%d: %w", m.ProducerID, t.Topic, p.Partition, err)
				}
			}
		}
	}
	return rec, fenceProducers(ctx, cl, scan, counted)
}

// fenceProducers bumps, with an empty abort (EndTxn v5), the epoch of the producers whose
// transactions endOpenTxns ended, and of those whose epoch at the broker is not above the
// epochs in their log (pids.log lost the bump that follows an EndTxn, the broker being killed
// in between). A client still running since before the crash then gets an error for its
// pending EndTxn, not an answer kfake makes up: kfake's KIP-890 retry check takes an EndTxn
// whose epoch is one below the producer's, of a producer not in a transaction, as the retry of
// the last EndTxn, and answers that the dropped transaction committed if the one before did;
// and with the epoch not bumped, it answers "committed" without a new epoch, and the client's
// next transaction reuses the epoch (its markers no longer name one transaction).
func fenceProducers(ctx context.Context, cl *kgo.Client, scan *logScan, ended map[producerEpoch]bool) error {
	fence := map[int64]bool{}
	for pe := range ended {
		fence[pe.id] = true
	}
	described, err := kadm.NewClient(cl).DescribeTransactions(ctx)
	if err != nil {
		return fmt.Errorf("describing the transactional producers: %w", err)
	}
	for _, d := range described {
		latest, inLog := scan.latest[d.ProducerID]
		if d.Err != nil || !fence[d.ProducerID] && !(inLog && d.ProducerEpoch <= latest) {
			continue
		}
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = d.TxnID, d.ProducerID, d.ProducerEpoch, false
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			return fmt.Errorf("fencing producer %d: %w", d.ProducerID, err)
		}
	}
	return nil
}

// kfakeIndexEntry is the size of an entry of kfake's segment index (N.idx, one per batch of
// the segment N.dat; persist.go in kfake). kfake writes a batch to the segment, then its entry
// to the index, and acknowledges the batch after both.
const kfakeIndexEntry = 15

// trimUnindexed cuts from every segment in dir the batches after the last one its index has an
// entry for: a broker killed between the two writes. kfake would load such a batch with
// default metadata, as if it were not in a transaction, and a read_committed reader would see
// the records of a transaction that never committed. The batch was never acknowledged, so
// cutting it loses nothing a client was told is written (a marker cut so is written again by
// endOpenTxns).
func trimUnindexed(dir string) error {
	segs, err := filepath.Glob(filepath.Join(dir, "partitions", "*", "*.dat"))
	if err != nil {
		return err
	}
	for _, seg := range segs {
		idx, err := os.Stat(strings.TrimSuffix(seg, ".dat") + ".idx")
		var indexed int64
		if err == nil {
			indexed = idx.Size() / kfakeIndexEntry
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		raw, err := os.ReadFile(seg)
		if err != nil {
			return err
		}
		// A RecordBatch starts with its first offset (8 bytes) and the length (4, big
		// endian) of what follows.
		var end int64
		for n := int64(0); n < indexed && end+12 <= int64(len(raw)); n++ {
			end += 12 + int64(binary.BigEndian.Uint32(raw[end+8:end+12]))
		}
		if end < int64(len(raw)) {
			if err := os.Truncate(seg, end); err != nil {
				return fmt.Errorf("cutting the unacknowledged end of %s: %w", seg, err)
			}
		}
	}
	return nil
}

// removeSnapshots removes kfake's per-partition snapshot.json files from dir.
func removeSnapshots(dir string) error {
	snaps, err := filepath.Glob(filepath.Join(dir, "partitions", "*", "snapshot.json"))
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if err := os.Remove(s); err != nil {
			return fmt.Errorf("removing %s: %w", s, err)
		}
	}
	return nil
}

// uncleanDir reports whether dir holds a broker's data that was not left by a clean stop.
func uncleanDir(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); errors.Is(err, os.ErrNotExist) {
		return false, nil // no broker has run here yet
	} else if err != nil {
		return false, err
	}
	_, err := os.Stat(filepath.Join(dir, cleanFile))
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// setClean writes (clean) or removes the clean-stop note in dir, durably: it must not outlive a
// removal that a crash follows.
func setClean(dir string, clean bool) error {
	path := filepath.Join(dir, cleanFile)
	var err error
	if clean {
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = errors.Join(f.Sync(), f.Close())
		}
	} else if err = os.Remove(path); errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("the clean-stop note of %s: %w", dir, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
