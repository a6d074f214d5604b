package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// idCounts counts records by id, and the records that are not what the pipeline writes.
type idCounts struct {
	ids      map[int64]int
	bad      int
	firstBad string
	// part is the partition each id was read from (the input topic's reader keeps it, so
	// that duplicates and losses can be told by partition).
	part map[int64]int32
}

func newIDCounts() *idCounts { return &idCounts{ids: map[int64]int{}, part: map[int64]int32{}} }

// addJSON counts one record and returns its id; with mapped set it must carry doubled =
// 2 * amount.
func (c *idCounts) addJSON(b []byte, mapped bool) (int64, bool) {
	var v struct {
		ID      *int64   `json:"id"`
		Amount  float64  `json:"amount"`
		Doubled *float64 `json:"doubled"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ID == nil || (mapped && (v.Doubled == nil || *v.Doubled != 2*v.Amount)) {
		c.addBad(fmt.Sprintf("%.200s (%v)", b, err))
		return 0, false
	}
	c.ids[*v.ID]++
	return *v.ID, true
}

func (c *idCounts) addBad(what string) {
	if c.bad == 0 {
		c.firstBad = what
	}
	c.bad++
}

// Count is what a reader found in a sink, against the input topic.
type Count struct {
	Expected   int // records in the input topic
	Seen       int // rows in the sink
	Duplicates int // rows beyond the input's copies of their id
	Missing    int // input records with no row
	Extra      int // rows whose id is not in the input, or not as the pipeline writes them
}

// tally compares a sink's rows with the input topic's records, id by id.
func tally(in, out *idCounts) Count {
	c := Count{Extra: out.bad}
	for id, n := range in.ids {
		c.Expected += n
		m := out.ids[id]
		c.Duplicates += max(0, m-n)
		c.Missing += max(0, n-m)
	}
	for id, m := range out.ids {
		c.Seen += m
		if in.ids[id] == 0 {
			c.Extra += m
		}
	}
	c.Seen += out.bad
	return c
}

// byPartition says, for the ids where the sink's count differs from the input's, how many
// rows too many and too few each input partition has, e.g. "p3: +120 -0".
func byPartition(in, out *idCounts) string {
	more, fewer := map[int32]int{}, map[int32]int{}
	for id, n := range in.ids {
		m := out.ids[id]
		more[in.part[id]] += max(0, m-n)
		fewer[in.part[id]] += max(0, n-m)
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(more)) {
		if more[p] > 0 || fewer[p] > 0 {
			parts = append(parts, fmt.Sprintf("p%d: +%d -%d", p, more[p], fewer[p]))
		}
	}
	return strings.Join(parts, ", ")
}

// readTopic reads every partition of topic from its start to its end as a read_committed
// consumer (committed) or a plain one, with franz-go. The end is the last stable offset for
// read_committed: what is beyond it belongs to a transaction still open.
func readTopic(ctx context.Context, addr, topic string, committed, mapped bool) (*idCounts, error) {
	counts := newIDCounts()
	err := eachRecord(ctx, addr, topic, committed, func(r *kgo.Record) {
		if id, ok := counts.addJSON(r.Value, mapped); ok && !mapped {
			counts.part[id] = r.Partition
		}
	})
	return counts, err
}

// eachRecord calls fn with every record of topic up to its end (its last stable offset when
// committed) as of the call, control records aside.
func eachRecord(ctx context.Context, addr, topic string, committed bool, fn func(*kgo.Record)) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("read %s: %w", topic, err)
	}
	adm := kadm.NewClient(cl)
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	cl.Close()
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("read %s: list its end offsets: %w", topic, err)
	}
	target := map[int32]int64{}
	start := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			target[o.Partition] = o.Offset
			start[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(target) == 0 {
		return nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start})}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err = kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("read %s: %w", topic, err)
	}
	defer cl.Close()
	next := map[int32]int64{}
	progress := time.Now()
	for {
		done := true
		for p, end := range target {
			done = done && next[p] >= end
		}
		if done {
			return nil
		}
		if time.Since(progress) > 30*time.Second || ctx.Err() != nil {
			return fmt.Errorf("read %s: stuck at offsets %v below the ends %v", topic, next, target)
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			progress = time.Now()
			if r.Offset >= target[r.Partition] {
				return // beyond the end taken at the start
			}
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				fn(r)
			}
		})
	}
}

// readKcat reads topic with Debian's kcat as a read_committed consumer, to the end of every
// partition. It returns nil and the reason when kcat is not installed.
func readKcat(ctx context.Context, addr, topic string) (*idCounts, string, error) {
	bin, err := exec.LookPath("kcat")
	if err != nil {
		return nil, "kcat is not installed (apt-get install kcat)", nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("kcat: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	counts := newIDCounts()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			counts.addJSON(sc.Bytes(), true)
		}
	}
	return counts, "", nil
}

// KcatIDs reads topic as readKcat does and returns how often each id is there, for tests
// outside the chaos run; skipped says why it did not read (kcat is not installed). A record
// that is not JSON with an id and doubled = 2 * amount is an error.
func KcatIDs(ctx context.Context, addr, topic string) (ids map[int64]int, skipped string, err error) {
	counts, skipped, err := readKcat(ctx, addr, topic)
	if counts == nil || err != nil {
		return nil, skipped, err
	}
	if counts.bad > 0 {
		return nil, "", fmt.Errorf("kcat read %d records that are not the pipeline's output, the first: %s", counts.bad, counts.firstBad)
	}
	return counts.ids, "", nil
}

// readFiles reads the committed rows of a WriteToJson directory as docs/files.md describes
// them: every line of epoch-*/lane-* (hidden .epoch-*.tmp directories are not committed).
func readFiles(dir string) (*idCounts, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "epoch-*", "lane-*"))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	counts := newIDCounts()
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				counts.addJSON(line, true)
			}
		}
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return counts, fmt.Errorf("read %s: the sink never created its directory", dir)
		}
	}
	return counts, nil
}
