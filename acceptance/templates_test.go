package acceptance

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKafkaToIcebergTemplateRuns is the acceptance: Google's gcloud --parameters,
// pasted, run template:Kafka_To_Iceberg against the embedded Kafka and a local warehouse. The
// built-in Streaming_Data_Generator fills the topic first; the embedded broker keeps its data
// in a directory (embedded:DIR), so that the second process finds what the first wrote.
func TestKafkaToIcebergTemplateRuns(t *testing.T) {
	t.Parallel()
	topic := fmt.Sprintf("tpl_events_%d", time.Now().UnixNano())
	kafka := "embedded:" + filepath.Join(t.TempDir(), "kafka")
	code, out, errOut := sluice(t, "run", "template:Streaming_Data_Generator", "-p", "qps=0", "-p", "messagesLimit=300",
		"-p", "schemaTemplate=GAME_EVENT", "-p", "seed=7", "-p", "bootstrapServer="+kafka, "-p", "kafkaTopic="+topic,
		"-p", "jobName="+topic)
	if code != exitOK || !strings.Contains(out, "read 300 records") {
		t.Fatalf("generator: exit %d\n%s%s", code, out, errOut)
	}
	w := icebergWarehouse{dir: t.TempDir()}
	schema := `{"type": "object", "properties": {"eventId": {"type": "string"}, "score": {"type": "integer"}, "country": {"type": "string"}}}`
	params := "^@^bootstrapServers=" + kafka + "@topic=" + topic + "@table=db.events@catalogName=sluice" +
		fmt.Sprintf(`@catalogProperties={"type": "sql", "uri": %q, "warehouse": %q}`, w.catalogDB(), w.root()) +
		"@triggeringFrequencySeconds=60@schema=" + schema +
		`@consumerConfigUpdates={"auto.offset.reset": "earliest"}@keep=["eventId", "score"]@allowDuplicates=false`
	code, out, errOut = sluice(t, "run", "template:Kafka_To_Iceberg", "--parameters", params, "--stop-at-end")
	if code != exitOK || !strings.Contains(out, "read 300 records") || !strings.Contains(out, "WriteToIceberg: wrote 300 rows") {
		t.Fatalf("Kafka_To_Iceberg: exit %d\n%s%s", code, out, errOut)
	}
	cat := w.catalog(t)
	if n := w.committedRows(t, cat, "db.events"); n != 300 {
		t.Errorf("the table holds %d rows, want 300", n)
	}
	tbl, err := w.load(t, cat, "db.events")
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	if strings.Join(cols, ",") != "eventId,score" {
		t.Errorf("table columns %v, want [eventId score] (keep)", cols)
	}
}
