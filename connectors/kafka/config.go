package kafka

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
)

func init() {
	component.RegisterSource("ReadFromKafka",
		"Reads the records of Kafka topics (RAW, STRING, JSON or Avro payloads) from every partition, resuming from the sinks' checkpoints.",
		buildRead)
	component.RegisterSink("WriteToKafka",
		"Writes rows to a Kafka topic as RAW, JSON or Avro records: exactly once with one transaction per epoch, or at least once.",
		buildWrite)
}

// ReadConfig is the config of ReadFromKafka.
type ReadConfig struct {
	Topic            []string `yaml:"topic" doc:"The topic to read, or a list of topics. Every partition of each is read."`
	TopicPattern     string   `yaml:"topic_pattern" doc:"sluice adds: instead of topic, read every topic whose whole name matches this regular expression (RE2 syntax), as found when the pipeline starts."`
	BootstrapServers string   `yaml:"bootstrap_servers" required:"true" doc:"Brokers to connect to first, as host1:port1,host2:port2; embedded: the broker sluice runs in its own process (embedded:DIR keeps its data in DIR across runs)."`
	Format           string   `yaml:"format" enum:"RAW,STRING,JSON,AVRO,PROTO" doc:"Encoding of the record values: RAW gives rows {payload: bytes}, STRING {payload: string}, JSON and AVRO the fields of schema, PROTO the fields of message_name. Default AVRO, as in Beam."`

	// The format keys: schema, file_descriptor_path, message_name, confluent_schema_registry_url
	// and confluent_schema_registry_subject.
	formats.Config `yaml:",inline"`

	ConsumerConfig        map[string]string `yaml:"consumer_config" doc:"Java consumer properties; see docs/kafka.md for the ones sluice maps onto its client (group.id, isolation.level, max.poll.records, fetch.max.bytes, ...). Others are ignored."`
	ConsumerConfigUpdates map[string]string `yaml:"consumer_config_updates" doc:"The same as consumer_config (Beam's name); applied after it."`

	AutoOffsetResetConfig string             `yaml:"auto_offset_reset_config" enum:"earliest,latest" doc:"Where a partition without a checkpoint (and without a committed offset of group.id) starts: earliest or latest (default, as in Beam)."`
	MaxNumRecords         int64              `yaml:"max_num_records" doc:"Read at most this many records, then end (a bounded read)."`
	WithMetadata          bool               `yaml:"with_metadata" doc:"sluice adds: append the record's kafka_key, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp and kafka_headers to each row."`
	MaxReadTimeSeconds    component.Duration `yaml:"max_read_time_seconds" doc:"Read for at most this long after the pipeline starts, then end (a bounded read); seconds, or a duration such as 5m."`
	FollowSchemaUpdates   bool               `yaml:"follow_schema_updates" doc:"sluice adds: with format AVRO and a schema registry, a newer version of the subject that adds fields adds them to the rows while the pipeline runs (at the rows' end, nullable), instead of leaving them out; WriteToIceberg with schema_evolution: add_columns adds them to the table."`

	// ErrorHandling names the output for records that cannot be decoded.
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records that cannot be decoded to this output as {failed_row: the value's bytes, error_message, source: {topic, partition, offset}} instead of stopping the pipeline."`

	// Keys of Dataflow's Kafka templates, accepted and ignored.
	AllowDuplicates         bool `yaml:"allow_duplicates" doc:"Accepted for Dataflow template compatibility; ignored (sluice reads exactly once)."`
	OffsetDeduplication     bool `yaml:"offset_deduplication" doc:"Accepted for Dataflow template compatibility; ignored (sluice reads exactly once)."`
	Redistributed           bool `yaml:"redistributed" doc:"Accepted for Dataflow template compatibility; ignored (partitions are spread over lanes)."`
	RedistributeNumKeys     int  `yaml:"redistribute_num_keys" doc:"Accepted for Dataflow template compatibility; ignored."`
	RedistributeByRecordKey bool `yaml:"redistribute_by_record_key" doc:"Accepted for Dataflow template compatibility; ignored."`
}

// WriteConfig is the config of WriteToKafka.
type WriteConfig struct {
	Topic            string `yaml:"topic" required:"true" doc:"The topic to write to."`
	BootstrapServers string `yaml:"bootstrap_servers" required:"true" doc:"Brokers to connect to first, as host1:port1,host2:port2; embedded: the broker sluice runs in its own process (embedded:DIR keeps its data in DIR across runs)."`
	Format           string `yaml:"format" required:"true" enum:"RAW,JSON,AVRO,PROTO" doc:"Encoding of the record values: RAW writes the one bytes or string field of the rows as is, JSON one object per row, AVRO the Avro binary encoding of the row, PROTO a message of message_name."`

	// The format keys: schema, file_descriptor_path, message_name, confluent_schema_registry_url
	// and confluent_schema_registry_subject.
	formats.Config `yaml:",inline"`

	ProducerConfigUpdates map[string]string `yaml:"producer_config_updates" doc:"Java producer properties; see docs/kafka.md for the ones sluice maps onto its client (batch.size, linger.ms, compression.type, acks, enable.idempotence, client.id, ...). Others are ignored."`

	// Key is sluice's record key expression.
	Key *component.Expr `yaml:"key" doc:"sluice adds: an expression over the input row whose value is the record key."`

	// ErrorHandling names the output for rows that cannot be encoded.
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send rows that cannot be encoded to this output as {failed_row, error_message, source} instead of stopping the pipeline."`
}

// SetDefaults sets Beam's defaults.
func (c *ReadConfig) SetDefaults() {
	c.Format = "AVRO"
}
