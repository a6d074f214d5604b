package main

import (
	"strings"
	"testing"
)

// TestKafkaToBigQueryParameters: Google's defaults and sluice's mappings of the template's
// parameters, and each parameter sluice cannot honour refused with what to give instead.
func TestKafkaToBigQueryParameters(t *testing.T) {
	base := []string{"-p", "readBootstrapServerAndTopic=localhost:9092;events", "-p", "outputTableSpec=my-project:ds.events",
		"-p", "messageFormat=JSON", "-p", `jsonSchema={"type": "object", "properties": {"id": {"type": "integer"}}}`}
	cases := []struct {
		name    string
		cmd     string
		params  []string
		code    int
		want    []string
		notWant []string
	}{
		{"defaults", "render", []string{"-p", "useBigQueryDLQ=true"}, exitOK,
			[]string{"table: my-project:ds.events_error_records", "delivery: exactly_once", "auto_offset_reset_config: latest",
				"create_disposition: CREATE_IF_NEEDED", "write_disposition: WRITE_APPEND"}, nil},
		{"no dead letters", "render", nil, exitOK, nil, []string{"error_handling", "extra_transforms"}},
		{"a dead-letter table turns them on", "render", []string{"-p", "outputDeadletterTable=my-project:ds.dlq"}, exitOK,
			[]string{"table: my-project:ds.dlq", "output: errors"}, nil},
		{"mappings", "render", []string{"-p", "useStorageWriteApiAtLeastOnce=true", "-p", "numStorageWriteApiStreams=3",
			"-p", "storageWriteApiTriggeringFrequencySec=2", "-p", "kafkaReadOffset=earliest"}, exitOK,
			[]string{"delivery: at_least_once", "num_streams: 3", "triggering_frequency_seconds: 2",
				"auto_offset_reset_config: earliest"}, []string{"group.id"}},
		{"consumer group", "render", []string{"-p", "consumerGroupId=g1"}, exitOK, []string{"group.id: g1"}, []string{"checkpoint_dir"}},
		{"SASL SCRAM", "render", []string{"-p", "kafkaReadAuthenticationMode=SASL_SCRAM_512", "-p", "kafkaReadUsername=u",
			"-p", "kafkaReadPassword=hunter2"}, exitOK,
			[]string{"security.protocol: SASL_SSL", "sasl.mechanism: SCRAM-SHA-512", "sasl.username: u", "<secret:kafkaReadPassword>"},
			[]string{"hunter2"}},
		{"dynamic tables", "validate", []string{"-p", "writeMode=DYNAMIC_TABLE_NAMES", "-p", "outputDataset=ds"}, exitInvalid,
			[]string{`parameter "writeMode" must be one of SINGLE_TABLE_NAME, not "DYNAMIC_TABLE_NAMES"`,
				`parameter "outputDataset" is not supported by sluice: writeMode DYNAMIC_TABLE_NAMES (a table per Avro schema) is not supported: give writeMode=SINGLE_TABLE_NAME and outputTableSpec`}, nil},
		{"Secret Manager", "validate", []string{"-p", "kafkaReadSaslScramPasswordSecretId=projects/p/secrets/s/versions/1"}, exitInvalid,
			[]string{`parameter "kafkaReadSaslScramPasswordSecretId" is not supported by sluice: Secret Manager is not available; give kafkaReadPassword=${env:NAME} or ${file:PATH}`}, nil},
		{"UDF", "validate", []string{"-p", "javascriptTextTransformGcsPath=gs://b/udf.js", "-p", "javascriptTextTransformFunctionName=f"}, exitInvalid,
			[]string{`parameter "javascriptTextTransformGcsPath" is not supported by sluice: JavaScript UDFs are not supported; write a pipeline with MapToFields`}, nil},
		{"registry OAuth", "validate", []string{"-p", "schemaRegistryOauthClientId=c"}, exitInvalid,
			[]string{`parameter "schemaRegistryOauthClientId" is not supported by sluice: OAuth to the schema registry is not supported`}, nil},
		{"Application Default Credentials for Kafka", "validate", []string{"-p", "kafkaReadAuthenticationMode=APPLICATION_DEFAULT_CREDENTIALS"}, exitInvalid,
			[]string{`parameter "kafkaReadAuthenticationMode" must be one of NONE, SASL_PLAIN, SASL_SCRAM_512, TLS, SSL`}, nil},
		{"schema on Cloud Storage", "validate", []string{"-p", "messageFormat=AVRO_BINARY_ENCODING", "-p", "binaryAvroSchemaPath=gs://b/s.avsc"}, exitInvalid,
			[]string{"gs:// paths are not supported here: copy the file and give its local path"}, nil},
		{"binary Avro without a schema", "validate", []string{"-p", "messageFormat=AVRO_BINARY_ENCODING"}, exitInvalid,
			[]string{"needs a schema: the Avro schema of the values"}, nil},
		{"JSON without a schema", "validate", []string{"-p", "messageFormat=JSON", "-p", "jsonSchema="}, exitInvalid,
			[]string{`schema: want a JSON Schema object, as a mapping or as JSON text, got ""`}, nil}, // an empty text value arrives as ""
		{"wire format without a registry", "validate", []string{"-p", "messageFormat=AVRO_CONFLUENT_WIRE_FORMAT"}, exitInvalid,
			[]string{"confluent_schema_registry_subject needs confluent_schema_registry_url"}, nil},
		{"truncating a table", "validate", []string{"-p", "writeDisposition=WRITE_TRUNCATE"}, exitInvalid,
			[]string{"write_disposition WRITE_TRUNCATE cannot be used by a streaming pipeline"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := sluice(t, append(append([]string{c.cmd, "template:Kafka_To_BigQuery"}, base...), c.params...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(out+errOut, w) {
					t.Errorf("output has %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}
