package kafka

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
)

// Transaction timeouts of the exactly-once producer, unless transaction.timeout.ms sets one:
// long enough for an epoch and its commit (txnTimeoutFor), within what brokers allow by
// default (transaction.max.timeout.ms, 15 minutes).
const (
	minTxnTimeout = time.Minute
	maxTxnTimeout = 15 * time.Minute
)

// txnTimeoutFor returns the transaction timeout for epochs cut every interval: three epochs
// and 30 s, at least a minute and at most maxTxnTimeout.
func txnTimeoutFor(interval time.Duration) time.Duration {
	return min(max(minTxnTimeout, 3*interval+30*time.Second), maxTxnTimeout)
}

func buildWrite(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := true
	set := newSettings()
	if set.bootstrap = parseBootstrap(cfg.BootstrapServers); len(set.bootstrap) == 0 {
		ctx.Errorf(ctx.KeyPos("bootstrap_servers"), "%s needs bootstrap_servers: host:port pairs separated by commas, or embedded", ctx.Describe())
		ok = false
	}
	if cfg.Topic == "" {
		ctx.Errorf(ctx.KeyPos("topic"), "%s needs a topic", ctx.Describe())
		ok = false
	}
	if applyProperties(ctx, "producer_config_updates", cfg.ProducerConfigUpdates, producerSide, set) && finishSecurity(ctx, "producer_config_updates", set) {
		if err := set.checkProducer(ctx.Options.Delivery != component.AtLeastOnce); err != nil {
			pos := propertyPos(ctx, "producer_config_updates", "acks")
			if set.acks == "all" {
				pos = propertyPos(ctx, "producer_config_updates", "enable.idempotence")
			}
			ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
			ok = false
		}
	} else {
		ok = false
	}
	keyFn, kok := recordKey(ctx, cfg.Key)
	ok = ok && kok
	writing, fok := cfg.Write(ctx, cfg.Format, formats.WriteOptions{Topic: cfg.Topic, RegistryAuth: set.registryAuth,
		LookupOnly: set.lookupOnly})
	if !ok || !fok {
		return nil, nil
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, ctx.Input(), component.IOShape)
	format := writing
	return &sink{what: ctx.Describe(), name: ctx.Name, topic: cfg.Topic, set: set, format: format,
		input: ctx.Input(), errOut: errOut, keyOf: keyFn, exactly: ctx.Options.Delivery != component.AtLeastOnce}, nil
}

// recordKey compiles sluice's `key:` expression, whose value becomes each record's key:
// strings and bytes as they are, numbers and booleans as their text, null as no key.
func recordKey(ctx *component.Context, key *component.Expr) (component.RowFunc, bool) {
	if key == nil {
		return nil, true
	}
	if ctx.Exprs == nil {
		ctx.Errorf(ctx.KeyPos("key"), "%s: key expressions are not available here", ctx.Describe())
		return nil, false
	}
	fn, typ, err := ctx.Exprs.Compile(*key, ctx.Input(), "")
	if err != nil {
		ctx.Diags.Append(key.Pos, err)
		return nil, false
	}
	switch typ.Kind {
	case schemas.String, schemas.Bytes, schemas.Int64, schemas.Float64, schemas.Bool, schemas.Any:
		return fn, true
	}
	ctx.Errorf(ctx.KeyPos("key"), "%s: key must give a string, bytes or a number, but %q gives %s", ctx.Describe(), key.Text, typ)
	return nil, false
}

// keyBytes is the record key for a key expression's value.
func keyBytes(v any) ([]byte, error) {
	switch k := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(k), nil
	case []byte:
		return k, nil
	case int64:
		return strconv.AppendInt(nil, k, 10), nil
	case float64:
		return strconv.AppendFloat(nil, k, 'g', -1, 64), nil
	case bool:
		return strconv.AppendBool(nil, k), nil
	}
	return nil, fmt.Errorf("key: a %T cannot be a record key; make the expression give a string", v)
}
