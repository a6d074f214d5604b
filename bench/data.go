package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// eventSchema is the JSON Schema of the records, shaped like the GAME_EVENT records of Google's
// Streaming Data Generator (ids, timestamps, strings, numbers) plus a padded note, so a record
// is about 1 KiB. eventTimestamp is microseconds since the epoch: the latency runs put the
// producer's clock there.
const eventSchema = `type: object
required: [id]
properties:
  id: {type: integer}
  eventId: {type: string}
  eventTimestamp: {type: integer}
  eventTime: {type: string, format: date-time}
  username: {type: string}
  team: {type: string}
  quest: {type: string}
  country: {type: string}
  platform: {type: string}
  score: {type: integer}
  level: {type: integer}
  completed: {type: boolean}
  latitude: {type: number}
  longitude: {type: number}
  coins: {type: number}
  userAgent: {type: string}
  note: {type: string}
`

// recordSize is the size the generator pads each record to.
const recordSize = 1024

var (
	words     = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu quest guild raid loot arena")
	quests    = []string{"A Break In the Ice", "Ghosts of Perdition", "Survive the Low Road", "The Long Night"}
	countries = []string{"Netherlands", "Germany", "United States", "Brazil", "Japan", "India", "Kenya", "France"}
	platforms = []string{"android", "ios", "web", "console"}
)

// generator makes GAME_EVENT-like JSON records. It is not safe for concurrent use.
type generator struct {
	rng  *rand.Rand
	note []byte
}

func newGenerator(seed uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, 7))}
}

// event appends record id, stamped with tsMicro, to dst.
func (g *generator) event(dst []byte, id, tsMicro int64) []byte {
	r := g.rng
	start := len(dst)
	dst = fmt.Appendf(dst, `{"id":%d,"eventId":"%08x-%04x-4%03x-%04x-%012x","eventTimestamp":%d,"eventTime":%q,`+
		`"username":"player_%d","team":"team-%d","quest":%q,"country":%q,"platform":%q,"score":%d,"level":%d,`+
		`"completed":%t,"latitude":%.6f,"longitude":%.6f,"coins":%.2f,`+
		`"userAgent":"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.%d.113 Mobile Safari/537.36","note":"`,
		id, r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), 0x8000|r.IntN(1<<14), r.Uint64()&(1<<48-1),
		tsMicro, time.UnixMicro(tsMicro).UTC().Format(time.RFC3339Nano),
		r.IntN(100_000), r.IntN(500), quests[r.IntN(len(quests))], countries[r.IntN(len(countries))],
		platforms[r.IntN(len(platforms))], r.IntN(10_000), r.IntN(60)+1, r.IntN(2) == 0,
		r.Float64()*180-90, r.Float64()*360-180, r.Float64()*10_000, r.IntN(9000)+1000)
	pad := recordSize - 2 - (len(dst) - start)
	g.note = g.note[:0]
	for len(g.note) < pad {
		g.note = append(g.note, words[r.IntN(len(words))]...)
		g.note = append(g.note, ' ')
	}
	dst = append(dst, g.note[:max(pad, 0)]...)
	return append(dst, `"}`...)
}

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
	g := newGenerator(1)
	var total int64
	errc := make(chan error, 1)
	for i := range n {
		v := g.event(nil, int64(i), baseMicro+int64(i)*1000)
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
	g := newGenerator(uint64(firstID) + 3)
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
			v := g.event(nil, firstID+int64(n), time.Now().UnixMicro())
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
