package kafka

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	secrets "github.com/sluicehq/sluice/internal/secret"
	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"
)

// side says which clients a Java property configures.
type side uint8

const (
	consumerSide side = 1 << iota
	producerSide
	bothSides = consumerSide | producerSide
)

// settings are what a connector's config asks of its Kafka client: the bootstrap servers and
// what the Java properties it understands map to. Source and sink share them, and one
// function builds a client from them.
type settings struct {
	bootstrap []string // as written; "embedded" is resolved when the connector opens
	clientID  string

	// Consumer.
	group         string
	reset         string // earliest, latest or none; "" until set
	readCommitted bool
	maxPoll       int
	autoCreate    bool
	fetch         []kgo.Opt     // fetch sizes and waits
	batchFetches  bool          // wait for fuller fetches by default (exactly_once)
	epoch         time.Duration // how often the run cuts an epoch (component.Paced); 0: unknown
	session       time.Duration

	// Producer.
	acks        string // all, 1 or 0
	idempotent  *bool  // nil: as Java does, on with acks=all and off otherwise
	txnID       string
	txnTimeout  time.Duration
	produce     []kgo.Opt // batching, lingering, compression, timeouts
	compression string

	// Schema registry (the Confluent serializers' properties).
	registryAuth string // user:password for basic auth; a secret
	lookupOnly   bool   // auto.register.schemas=false: look the writer's schema up, never register it

	security security // TLS and SASL

	// metrics, when the run exports metrics, measures the data clients (observe.go).
	metrics *clientMetrics

	// ignored lists the properties given that sluice does not use, in order.
	ignored []string
	// origin holds, for every property given, the config key it came from (for positions of
	// problems found after all of them were read).
	origin map[string]string
}

func newSettings() *settings {
	return &settings{readCommitted: true, maxPoll: defaultMaxPoll, autoCreate: true, acks: "all", origin: map[string]string{}}
}

// defaultMaxPoll is the most records one Read returns unless max.poll.records says otherwise.
const defaultMaxPoll = 1000

// property is a Java client property that sluice maps onto its client.
type property struct {
	side  side
	apply func(s *settings, v string) error
	// secret marks a value that is never repeated: its apply's errors must not contain it.
	secret bool
}

// ignoredProperty is a property sluice accepts and does not need: the connector does what it
// asks for in its own way.
func ignoredProperty(sd side) property {
	return property{side: sd, apply: func(s *settings, _ string) error { return nil }}
}

// properties are the Java properties sluice understands. docs/kafka.md lists each of them (a
// test holds it).
var properties = map[string]property{
	"group.id": {side: consumerSide, apply: func(s *settings, v string) error { s.group = v; return nil }},
	"auto.offset.reset": {side: consumerSide, apply: func(s *settings, v string) error {
		return oneOf(&s.reset, v, "earliest", "latest", "none")
	}},
	"isolation.level": {side: consumerSide, apply: func(s *settings, v string) error {
		var level string
		err := oneOf(&level, v, "read_committed", "read_uncommitted")
		s.readCommitted = level == "read_committed"
		return err
	}},
	"max.poll.records": {side: consumerSide, apply: func(s *settings, v string) error {
		n, err := positive(v, 1<<20)
		s.maxPoll = int(n)
		return err
	}},
	"fetch.max.bytes":           {side: consumerSide, apply: int32Opt(func(s *settings, n int32) { s.fetch = append(s.fetch, kgo.FetchMaxBytes(n)) })},
	"max.partition.fetch.bytes": {side: consumerSide, apply: int32Opt(func(s *settings, n int32) { s.fetch = append(s.fetch, kgo.FetchMaxPartitionBytes(n)) })},
	"fetch.min.bytes":           {side: consumerSide, apply: int32Opt(func(s *settings, n int32) { s.fetch = append(s.fetch, kgo.FetchMinBytes(n)) })},
	"fetch.max.wait.ms":         {side: consumerSide, apply: msOpt(func(s *settings, d time.Duration) { s.fetch = append(s.fetch, kgo.FetchMaxWait(d)) })},
	"session.timeout.ms":        {side: consumerSide, apply: msOpt(func(s *settings, d time.Duration) { s.session = d })},
	"allow.auto.create.topics": {side: consumerSide, apply: func(s *settings, v string) error {
		return boolean(&s.autoCreate, v)
	}},
	"enable.auto.commit":      ignoredProperty(consumerSide),
	"auto.commit.interval.ms": ignoredProperty(consumerSide),
	"key.deserializer":        ignoredProperty(consumerSide),
	"value.deserializer":      ignoredProperty(consumerSide),

	"client.id":         {side: bothSides, apply: func(s *settings, v string) error { s.clientID = v; return nil }},
	"bootstrap.servers": ignoredProperty(bothSides),

	"batch.size": {side: producerSide, apply: int32Opt(func(s *settings, n int32) { s.produce = append(s.produce, kgo.ProducerBatchMaxBytes(n)) })},
	"linger.ms": {side: producerSide, apply: func(s *settings, v string) error {
		n, err := nonNegative(v, 1<<31-1)
		s.produce = append(s.produce, kgo.ProducerLinger(time.Duration(n)*time.Millisecond))
		return err
	}},
	"compression.type": {side: producerSide, apply: func(s *settings, v string) error {
		return oneOf(&s.compression, v, "none", "gzip", "snappy", "lz4", "zstd")
	}},
	"acks": {side: producerSide, apply: func(s *settings, v string) error {
		if v == "-1" {
			v = "all"
		}
		return oneOf(&s.acks, v, "all", "1", "0")
	}},
	"enable.idempotence": {side: producerSide, apply: func(s *settings, v string) error {
		var b bool
		err := boolean(&b, v)
		s.idempotent = &b
		return err
	}},
	"transactional.id":       {side: producerSide, apply: func(s *settings, v string) error { s.txnID = v; return nil }},
	"transaction.timeout.ms": {side: producerSide, apply: msOpt(func(s *settings, d time.Duration) { s.txnTimeout = d })},
	"delivery.timeout.ms": {side: producerSide, apply: msOpt(func(s *settings, d time.Duration) {
		s.produce = append(s.produce, kgo.RecordDeliveryTimeout(d))
	})},
	"key.serializer":   ignoredProperty(producerSide),
	"value.serializer": ignoredProperty(producerSide),

	"basic.auth.user.info":                 {side: bothSides, apply: setRegistryAuth, secret: true},
	"schema.registry.basic.auth.user.info": {side: bothSides, apply: setRegistryAuth, secret: true},
	"basic.auth.credentials.source": {side: bothSides, apply: func(s *settings, v string) error {
		var source string
		return oneOf(&source, v, "USER_INFO", "URL")
	}},
	"auto.register.schemas": {side: producerSide, apply: func(s *settings, v string) error {
		var auto bool
		err := boolean(&auto, v)
		s.lookupOnly = !auto
		return err
	}},
}

// setRegistryAuth sets the schema registry's basic auth credentials, user:password.
func setRegistryAuth(s *settings, v string) error {
	if !strings.Contains(v, ":") {
		return errors.New("must be user:password (the value is not shown)")
	}
	s.registryAuth = v
	return nil
}

// unsupportedPrefixes are property families whose unknown members sluice must not ignore:
// connecting without them would fail later with a confusing error, or not be secure.
var unsupportedPrefixes = []string{"sasl.", "ssl."}

// applyProperties applies the properties of config key (a mapping of Java properties) for the
// given side to s, reporting a bad value at its position. Values may hold ${env:NAME}, read
// from the environment now. Secret values, and values from the environment, are never
// repeated in messages. Unknown properties are recorded in s.ignored.
func applyProperties(ctx *component.Context, key string, props map[string]string, sd side, s *settings) bool {
	node := component.MappingValue(ctx.Config, key)
	ok := true
	for _, name := range propertyOrder(node, props) {
		pos := propertyPos(ctx, key, name)
		p, known := properties[name]
		switch {
		case known && p.side&sd != 0:
			value, vars, err := expandRefs(strings.TrimSpace(props[name]))
			if err == nil {
				s.origin[name] = key
				if err = p.apply(s, value); err != nil && (p.secret || len(vars) > 0) {
					err = redacted(err, vars, p.secret)
				}
			}
			if err != nil {
				ctx.Errorf(pos, "%s: %s %q: %v", ctx.Describe(), key, name, err)
				ok = false
			}
		case hasUnsupportedPrefix(name):
			// The value may be a secret: never repeat it.
			ctx.Errorf(pos, "%s: %s %q is not supported: see docs/kafka.md for the security properties sluice understands", ctx.Describe(), key, name)
			ok = false
		default:
			s.ignored = append(s.ignored, name)
			ctx.Warnf(pos, "%s: %s %q is not a property sluice uses; it is ignored (see docs/kafka.md)", ctx.Describe(), key, name)
		}
	}
	return ok
}

// propertyPos returns the position of property name of config key, or of the key.
func propertyPos(ctx *component.Context, key, name string) diag.Pos {
	if v := component.MappingValue(component.MappingValue(ctx.Config, key), name); v != nil {
		return ctx.At(v)
	}
	return ctx.KeyPos(key)
}

// settingPos returns the position of property name where it was given (the config key it
// came from last), or of key when it was not given.
func settingPos(ctx *component.Context, s *settings, key, name string) diag.Pos {
	if from, ok := s.origin[name]; ok {
		return propertyPos(ctx, from, name)
	}
	return ctx.KeyPos(key)
}

// expandRefs replaces the ${env:NAME} and ${file:PATH} references in v (secrets.Expand) and
// returns them as written, for messages (names and paths are not secret; values may be).
func expandRefs(v string) (string, []string, error) {
	out, refs, err := secrets.Expand(v)
	texts := make([]string, len(refs))
	for i, r := range refs {
		texts[i] = r.Text
	}
	return out, texts, err
}

// valueError is an invalid property value: what the value must be, and what it is.
type valueError struct {
	want string
	got  string
}

func (e *valueError) Error() string { return fmt.Sprintf("must be %s, not %q", e.want, e.got) }

// redacted returns err for a value that must not be repeated: what a value must be, without
// the value. vars are the references the value came from (${env:NAME}, ${file:PATH}); secret
// says that the property's own messages never hold its value.
func redacted(err error, vars []string, secret bool) error {
	from := ""
	if len(vars) > 0 {
		from = " from " + strings.Join(vars, ", ")
	}
	var ve *valueError
	switch {
	case errors.As(err, &ve):
		return fmt.Errorf("must be %s (the value%s is not shown)", ve.want, from)
	case secret:
		return err
	}
	return fmt.Errorf("the value%s is not valid (it is not shown)", from)
}

// propertyOrder returns the names of props in the order the file lists them, so that problems
// are reported in file order (sorted when the node is unknown).
func propertyOrder(node *yaml.Node, props map[string]string) []string {
	names := make([]string, 0, len(props))
	if node != nil && node.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(node.Content); i += 2 {
			if _, ok := props[node.Content[i].Value]; ok {
				names = append(names, node.Content[i].Value)
			}
		}
	}
	if len(names) == len(props) {
		return names
	}
	names = names[:0]
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func hasUnsupportedPrefix(name string) bool {
	for _, p := range unsupportedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func oneOf(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			*dst = a
			return nil
		}
	}
	return &valueError{"one of " + strings.Join(allowed, ", "), v}
}

func boolean(dst *bool, v string) error {
	switch strings.ToLower(v) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return &valueError{"true or false", v}
	}
	return nil
}

func nonNegative(v string, maxValue int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > maxValue {
		return 0, &valueError{fmt.Sprintf("an integer from 0 to %d", maxValue), v}
	}
	return n, nil
}

func positive(v string, maxValue int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > maxValue {
		return 0, &valueError{fmt.Sprintf("an integer from 1 to %d", maxValue), v}
	}
	return n, nil
}

func int32Opt(set func(*settings, int32)) func(*settings, string) error {
	return func(s *settings, v string) error {
		n, err := positive(v, 1<<31-1)
		if err == nil {
			set(s, int32(n))
		}
		return err
	}
}

func msOpt(set func(*settings, time.Duration)) func(*settings, string) error {
	return func(s *settings, v string) error {
		n, err := positive(v, 1<<31-1)
		if err == nil {
			set(s, time.Duration(n)*time.Millisecond)
		}
		return err
	}
}

// compressionCodec returns the codec named by compression.type.
func compressionCodec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}
