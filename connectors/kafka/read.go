package kafka

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
)

func buildRead(ctx *component.Context, cfg *ReadConfig) (component.Source, error) {
	ok := true
	var topics []string
	var pattern *regexp.Regexp
	switch {
	case cfg.TopicPattern != "" && len(cfg.Topic) > 0:
		ctx.Errorf(ctx.KeyPos("topic_pattern"), "%s: give topic or topic_pattern, not both", ctx.Describe())
		ok = false
	case cfg.TopicPattern != "":
		var err error
		if pattern, err = regexp.Compile("^(?:" + cfg.TopicPattern + ")$"); err != nil {
			ctx.Errorf(ctx.KeyPos("topic_pattern"), "%s: topic_pattern is not a regular expression: %v", ctx.Describe(), err)
			ok = false
		}
	default:
		if topics = uniqueTopics(ctx, cfg.Topic); topics == nil {
			ok = false
		}
	}
	set := newSettings()
	set.batchFetches = ctx.Options.Delivery != component.AtLeastOnce
	if set.bootstrap = parseBootstrap(cfg.BootstrapServers); len(set.bootstrap) == 0 {
		ctx.Errorf(ctx.KeyPos("bootstrap_servers"), "%s needs bootstrap_servers: host:port pairs separated by commas, or embedded", ctx.Describe())
		ok = false
	}
	ok = applyProperties(ctx, "consumer_config", cfg.ConsumerConfig, consumerSide, set) && ok
	ok = applyProperties(ctx, "consumer_config_updates", cfg.ConsumerConfigUpdates, consumerSide, set) && ok
	ok = ok && finishSecurity(ctx, "consumer_config", set)
	if cfg.AutoOffsetResetConfig != "" {
		set.reset = cfg.AutoOffsetResetConfig
	} else if set.reset == "" {
		set.reset = "latest"
	}
	if cfg.MaxNumRecords < 0 {
		ctx.Errorf(ctx.KeyPos("max_num_records"), "%s: max_num_records must not be negative", ctx.Describe())
		ok = false
	}
	if cfg.FollowSchemaUpdates && (!cfg.UsesRegistry() || cfg.Format != "AVRO") {
		ctx.Errorf(ctx.KeyPos("follow_schema_updates"), "%s: follow_schema_updates follows the newer versions of a schema registry subject: it needs format AVRO and confluent_schema_registry_url", ctx.Describe())
		ok = false
	}
	var reading formats.Reading
	fok := false
	if !cfg.UsesRegistry() || ok { // it may ask the registry, with the properties' credentials
		reading, fok = cfg.Read(ctx, cfg.Format, formats.ReadOptions{Topics: topics, RegistryAuth: set.registryAuth,
			Follow: cfg.FollowSchemaUpdates})
	}
	if !ok || !fok {
		return nil, nil
	}
	format := reading
	out := format.Schema
	if out == nil && format.From != "" {
		ctx.OutputFromService(component.Main, format.From)
	} else if cfg.WithMetadata {
		if out = withMetadata(ctx, out); out == nil {
			return nil, nil
		}
	}
	if out != nil {
		ctx.Output(component.Main, out)
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOShape)
	s := newSource(ctx.Describe(), topics, set, format, errOut)
	s.pattern, s.patternSrc = pattern, cfg.TopicPattern
	s.out, s.metadata = out, cfg.WithMetadata
	s.maxRecords, s.maxTime = cfg.MaxNumRecords, time.Duration(cfg.MaxReadTimeSeconds)
	return s, nil
}

// uniqueTopics returns the topics without repeats, or nil (reported) when one is empty.
func uniqueTopics(ctx *component.Context, topics []string) []string {
	var out []string
	for _, t := range topics {
		t = strings.TrimSpace(t)
		if t == "" {
			ctx.Errorf(ctx.KeyPos("topic"), "%s: a topic name must not be empty", ctx.Describe())
			return nil
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		ctx.Errorf(ctx.KeyPos("topic"), "%s needs a topic (or a topic_pattern)", ctx.Describe())
	}
	return out
}
