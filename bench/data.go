package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// baseMicro is the event time of record 0 of the loaded topic.
var baseMicro = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC).UnixMicro()

// createTopic creates topic with partitions partitions.
func createTopic(ctx context.Context, addr, topic string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	return nil
}

// deleteTopics deletes topics once a run is measured: the broker keeps every record in
// memory, and the outputs of a full run (latency runs above all) would otherwise fill it.
func deleteTopics(ctx context.Context, addr string, topics ...string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).DeleteTopics(ctx, topics...)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("deleting topics %v: %w", topics, err)
	}
	return nil
}

// load produces records 0..n-1 into topic and returns their total size in bytes.
func load(ctx context.Context, addr, topic string, n int) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(20_000))
	if err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	g := benchdata.NewGenerator(1)
	var total int64
	errc := make(chan error, 1)
	for i := range n {
		v := g.Event(nil, int64(i), baseMicro+int64(i)*1000)
		total += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, fmt.Errorf("flushing the load: %w", err)
	}
	select {
	case err := <-errc:
		return 0, fmt.Errorf("producing the load: %w", err)
	default:
	}
	return total, nil
}

// paced produces records with ids from firstID into topic at rate records per second for d,
// each stamped with the time it is handed to the client, and returns how many it produced.
func paced(ctx context.Context, cl *kgo.Client, topic string, firstID int64, rate int, d time.Duration) (int, error) {
	g := benchdata.NewGenerator(uint64(firstID) + 3)
	errc := make(chan error, 1)
	start := time.Now()
	n := 0
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		el := now.Sub(start)
		if el >= d {
			break
		}
		for due := int(el.Seconds() * float64(rate)); n < due; n++ {
			v := g.Event(nil, firstID+int64(n), time.Now().UnixMicro())
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return n, fmt.Errorf("flushing the paced producer: %w", err)
	}
	select {
	case err := <-errc:
		return n, fmt.Errorf("paced producer: %w", err)
	default:
	}
	return n, nil
}
