package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// embeddedServers is the bootstrap_servers value that names the in-process broker;
// "embedded:DIR" names the one that keeps its data in DIR.
const embeddedServers = "embedded"

// embeddedDir reports whether bootstrap names the embedded broker, and its data directory
// ("": in memory).
func embeddedDir(bootstrap []string) (string, bool) {
	if len(bootstrap) != 1 {
		return "", false
	}
	if bootstrap[0] == embeddedServers {
		return "", true
	}
	dir, ok := strings.CutPrefix(bootstrap[0], embeddedServers+":")
	return dir, ok && dir != ""
}

// metadataMinAge is how soon a client may ask for metadata again. The in-process broker
// creates topics on first use, and a low value lets clients see them at once; tests lower it
// for any broker.
var metadataMinAge = 5 * time.Second

// embeddedMetadataMinAge is metadataMinAge with the embedded broker.
const embeddedMetadataMinAge = 100 * time.Millisecond

// parseBootstrap splits bootstrap_servers ("host1:port1,host2:port2").
func parseBootstrap(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// clientLogEnv names the environment variable that makes the Kafka clients log, at the level
// it gives (error, warn, info or debug), into the run's log: for troubleshooting, docs/kafka.md.
const clientLogEnv = "SLUICE_KAFKA_CLIENT_LOG"

var clientLogLevels = map[string]kgo.LogLevel{"error": kgo.LogLevelError, "warn": kgo.LogLevelWarn, "info": kgo.LogLevelInfo, "debug": kgo.LogLevelDebug}

// clientLogger is franz-go's logger over slog's default logger, so that the client's lines
// have the run's format, level (--log-level must let them through too) and masking.
type clientLogger struct{ level kgo.LogLevel }

func (l clientLogger) Level() kgo.LogLevel { return l.level }

func (l clientLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	to := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		to = slog.LevelError
	case kgo.LogLevelWarn:
		to = slog.LevelWarn
	case kgo.LogLevelInfo:
		to = slog.LevelInfo
	}
	slog.Default().Log(context.Background(), to, msg, append(keyvals, "library", "franz-go")...)
}

// With exactly_once the output of an epoch becomes visible at its commit, so a fetch may wait
// a little for more records: at a steady input, fetches of 1 MiB (or what came within the
// wait) instead of whatever arrived halve the CPU per record (docs/kafka.md). A record waits
// in the broker that long at most, on top of its epoch: the wait is a quarter of the epoch
// interval, within 10 ms (franz-go's least) and 250 ms (issue 21: 250 ms at 10k records/s
// with 50 ms epochs was most of a record's latency; a tenth, 10 ms, cost 19% more CPU per
// record than a quarter, 12.5 ms, in more fetches of fewer records and more collections of
// a smaller heap).
const (
	batchFetchMinBytes = 1 << 20
	batchFetchMaxWait  = 250 * time.Millisecond
	batchFetchMinWait  = 10 * time.Millisecond
)

// batchFetchWait is the fetch wait with exactly_once for epochs cut every interval (0:
// unknown, the longest).
func batchFetchWait(interval time.Duration) time.Duration {
	if interval <= 0 {
		return batchFetchMaxWait
	}
	return min(max(interval/4, batchFetchMinWait), batchFetchMaxWait)
}

// What a client buffers (docs/operations.md, "Memory"): a fetch holds up to fetchMaxBytes of
// record batches (compressed as they are stored; franz-go's default is 50 MiB), and one fetch
// per broker waits while the previous one is processed; a producer holds up to
// produceBufferBytes of records not yet acknowledged (franz-go's default is 50,000 records,
// 50 MB of 1 KiB records; Java's buffer.memory is 32 MiB). The records are in memory twice
// until acknowledged, as sluice's encoded values and as franz-go's request batches: at 16 MiB
// they were 38 MB of a 106 MB Iceberg -> Kafka heap; 4 MiB cut peak RSS by 11-24 MiB at no
// measured cost in throughput (BENCHMARKS.md, target 6). fetch.max.bytes and
// max.partition.fetch.bytes given in the properties win.
const (
	fetchMaxBytes      = 2 << 20
	produceBufferBytes = 4 << 20
)

// newClient returns a client of the brokers in s with the extra options (consumer or
// producer ones). It starts the embedded broker when the config says so.
func (s *settings) newClient(extra ...kgo.Opt) (*kgo.Client, error) {
	seeds, minAge := s.bootstrap, metadataMinAge
	if dir, ok := embeddedDir(seeds); ok {
		addr, err := embedded.AddrIn(dir)
		if err != nil {
			return nil, err
		}
		seeds, minAge = []string{addr}, min(minAge, embeddedMetadataMinAge)
	}
	clientID := s.clientID
	if clientID == "" {
		clientID = "sluice"
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(clientID), kgo.MetadataMinAge(minAge),
		kgo.WithHooks(&brokerWatch{})}, s.security.opts()...)
	opts = append(opts, extra...)
	if level, ok := clientLogLevels[os.Getenv(clientLogEnv)]; ok {
		opts = append(opts, kgo.WithLogger(clientLogger{level: level}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(seeds, ","), err)
	}
	return cl, nil
}

// describeConn says how the client connects, for messages: the servers, the security protocol
// and the SASL mechanism and user (never a password).
func (s *settings) describeConn() string {
	out := strings.Join(s.bootstrap, ",")
	switch sec := &s.security; {
	case sec.usesSASL():
		out += fmt.Sprintf(" over %s (SASL %s as user %q)", sec.protocol, sec.mechanism, sec.saslUser)
	case sec.protocol != "" && sec.protocol != "PLAINTEXT":
		out += " over " + sec.protocol
	}
	return out
}

// consumerOpts are the options of a client that reads: the isolation level, fetch sizes, and
// no silent reset when an offset is out of range (Open checks the offsets it starts from;
// records lost later stop the pipeline instead of being skipped).
func (s *settings) consumerOpts() []kgo.Opt {
	opts := []kgo.Opt{kgo.KeepControlRecords(), kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxBytes(fetchMaxBytes)}
	if s.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if s.batchFetches {
		opts = append(opts, kgo.FetchMinBytes(batchFetchMinBytes), kgo.FetchMaxWait(batchFetchWait(s.epoch)))
	}
	return append(opts, s.fetch...) // fetch.min.bytes and fetch.max.wait.ms given win
}

// producerOpts are the options of a client that writes; txnID makes it transactional.
func (s *settings) producerOpts(txnID string, txnTimeout time.Duration) []kgo.Opt {
	opts := []kgo.Opt{kgo.AllowAutoTopicCreation(), kgo.MaxBufferedBytes(produceBufferBytes)}
	switch s.acks {
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if !s.idempotence() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	// Uncompressed unless compression.type says otherwise, as Java's producer (and so Beam's
	// KafkaIO and Kafka Connect) defaults; franz-go's own default is snappy.
	opts = append(opts, kgo.ProducerBatchCompression(compressionCodec(s.compression)))
	if txnID != "" {
		opts = append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(txnTimeout))
	}
	return append(opts, s.produce...)
}

// idempotence reports whether the producer is idempotent: as set, or as Java decides (on with
// acks=all).
func (s *settings) idempotence() bool {
	if s.idempotent != nil {
		return *s.idempotent
	}
	return s.acks == "all"
}

// checkProducer checks that the producer properties fit the delivery guarantee.
func (s *settings) checkProducer(exactlyOnce bool) error {
	switch {
	case s.idempotent != nil && *s.idempotent && s.acks != "all":
		return fmt.Errorf("enable.idempotence=true needs acks=all, not acks=%s", s.acks)
	case exactlyOnce && s.acks != "all":
		return fmt.Errorf("delivery exactly_once writes with transactions, which need acks=all, not acks=%s (or use options.delivery: at_least_once)", s.acks)
	case s.acks != "all":
		return fmt.Errorf("acks=%s lets a checkpoint cover records the brokers never stored (acks=0) or lose them when a leader fails (acks=1): sluice writes with acks=all", s.acks)
	case exactlyOnce && !s.idempotence():
		return errors.New("delivery exactly_once writes with transactions, which need enable.idempotence=true (or use options.delivery: at_least_once)")
	}
	return nil
}

// partitionCounts returns the number of partitions of each topic. With create set it asks the
// broker to create missing topics, as Kafka's Java clients do (the broker decides: Kafka's
// auto.create.topics.enable, always with the embedded broker); a topic that is still missing
// is an error.
func partitionCounts(ctx context.Context, set *settings, cl *kgo.Client, topics []string, create bool) (map[string]int32, error) {
	const attempts = 50 // a created topic may have no leader for a moment
	var lastErr error
	for range attempts {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = create
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			// The first request of a connector: say how it connects.
			return nil, fmt.Errorf("connecting to %s (Kafka, bootstrap_servers) for the metadata of topics %s: %w", set.describeConn(), strings.Join(topics, ", "), err)
		}
		counts := map[string]int32{}
		lastErr = nil
		for _, t := range resp.Topics {
			name := ""
			if t.Topic != nil {
				name = *t.Topic
			}
			err := kerr.ErrorForCode(t.ErrorCode)
			switch {
			case err == nil && len(t.Partitions) > 0:
				counts[name] = int32(len(t.Partitions))
				continue
			case errors.Is(err, kerr.UnknownTopicOrPartition) && !create:
				return nil, fmt.Errorf("topic %q does not exist", name)
			case err != nil && !kerr.IsRetriable(err) && !errors.Is(err, kerr.UnknownTopicOrPartition):
				return nil, fmt.Errorf("metadata of topic %q: %w", name, err)
			}
			lastErr = fmt.Errorf("topic %q does not exist, and the broker did not create it", name)
			if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
				lastErr = fmt.Errorf("metadata of topic %q: %w", name, err)
			}
		}
		if lastErr == nil && len(counts) == len(topics) {
			return counts, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, lastErr
}
