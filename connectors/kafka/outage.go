package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/outage"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerWatch is a franz-go hook that reports, for every client, failed and successful
// requests and connections to the broker's outage watch (internal/outage), so that a broker
// outage is logged when it starts, while it lasts, and when it ends.
type brokerWatch struct {
	mu      sync.Mutex
	brokers map[brokerAddr]*outage.Watch
}

type brokerAddr struct {
	host string
	port int32
}

// The request keys of the client's metrics (KIP-714): GetTelemetrySubscriptions and
// PushTelemetry.
const (
	telemetrySubscriptionsKey = 71
	telemetryKey              = 72
)

// brokerRetrying is what waits while a broker is away.
const brokerRetrying = "with backoff: reads, writes and commits wait for it"

var (
	_ kgo.HookBrokerConnect = (*brokerWatch)(nil)
	_ kgo.HookBrokerE2E     = (*brokerWatch)(nil)
)

func (b *brokerWatch) watch(meta kgo.BrokerMetadata) *outage.Watch {
	k := brokerAddr{meta.Host, meta.Port}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.brokers[k]
	if w == nil {
		if b.brokers == nil {
			b.brokers = map[brokerAddr]*outage.Watch{}
		}
		w = outage.For("Kafka broker", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), brokerRetrying)
		b.brokers[k] = w
	}
	return w
}

// OnBrokerConnect reports a failed dial or connection setup.
func (b *brokerWatch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && !closing(err) {
		b.watch(meta).Failed(err)
	}
}

// OnBrokerE2E reports a request that failed on the connection, or one that was answered.
func (b *brokerWatch) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	switch err := e2e.Err(); {
	case key == telemetryKey || key == telemetrySubscriptionsKey:
		// The client's own metrics (KIP-714) say nothing of reads and writes; a broker that
		// does not know the client after a restart drops the connection on them.
	case err == nil:
		b.watch(meta).OK()
	case !closing(err):
		b.watch(meta).Failed(err)
	}
}

// closing reports whether err comes from the client closing or a request being given up,
// not from the broker.
func closing(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, net.ErrClosed)
}
