package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// producer writes records with ids 0, 1, 2, ... into the input topic at a steady rate, and
// remembers which ids the broker acknowledged.
type producer struct {
	cl   *kgo.Client
	rate int

	mu     sync.Mutex
	acked  []bool // by id
	failed int
	lastEr error
	sent   int
}

func newProducer(addr string, rate int) (*producer, error) {
	// The client retries a produce until it lands (also across broker restarts); idempotence
	// keeps its retries from writing a record twice. Round robin spreads the records over
	// every partition: the default sticky partitioner keeps writing one partition for long
	// spells, so the others sat idle, moved between copies with nothing in flight, and held
	// a grouping's watermark back until they went idle (the windows scenario).
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.DefaultProduceTopic(inputTopic), kgo.MetadataMinAge(200*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	return &producer{cl: cl, rate: rate}, nil
}

// run produces until ctx is done, then waits (up to 2 minutes) for the last acknowledgements.
func (p *producer) run(ctx context.Context) error {
	const tick = 20 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	// Records are produced under a context of their own, so that stopping does not fail the
	// ones still buffered; it ends 2 minutes after ctx, in case the broker never comes back.
	hard, hardCancel := context.WithCancel(context.Background())
	defer hardCancel()
	context.AfterFunc(ctx, func() { time.AfterFunc(2*time.Minute, hardCancel) })
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		due := int(time.Since(start).Seconds() * float64(p.rate))
		for p.sent < due && ctx.Err() == nil {
			id := p.sent
			p.sent++
			p.mu.Lock()
			p.acked = append(p.acked, false)
			p.mu.Unlock()
			v := fmt.Sprintf(`{"id": %d, "name": "user-%d", "amount": %d.5}`, id, id%977, id%1000)
			p.cl.Produce(hard, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.failed++
					p.lastEr = err
					return
				}
				p.acked[id] = true
			})
		}
	}
	err := p.cl.Flush(hard)
	p.cl.Close()
	if err != nil {
		return fmt.Errorf("producer: flush the last records: %w", err)
	}
	return nil
}

// ackedIDs returns the ids the broker acknowledged, how many were sent, and how many failed
// with the last error.
func (p *producer) ackedIDs() (acked []int64, sent, failed int, lastErr error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ok := range p.acked {
		if ok {
			acked = append(acked, int64(id))
		}
	}
	return acked, len(p.acked), p.failed, p.lastEr
}
