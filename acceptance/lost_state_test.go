package acceptance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestLostCheckpointIsLoud: a sink whose target holds data but that has no checkpoint of the
// pipeline refuses to start (exit 3), naming what is missing and --allow-reset-state, instead
// of starting from the sources' default position and writing everything again.
func TestLostCheckpointIsLoud(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	const records = 2000
	addr := startDevKafka(t, "--topic", "lost_in:4").addr
	if err := <-produceSteadily(t, addr, "lost_in", records, time.Second); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, pipeline string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, binary, append([]string{"run", pipeline, "--stop-at-end"}, args...)...).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	refused := func(t *testing.T, out string, code int, want ...string) {
		t.Helper()
		if code != 3 {
			t.Fatalf("exit %d, want 3 (refused):\n%s", code, out)
		}
		for _, w := range append(want, "has no checkpoint of pipeline", "--allow-reset-state") {
			if !strings.Contains(out, w) {
				t.Errorf("the refusal does not say %q:\n%s", w, out)
			}
		}
	}

	// The checkpoint topic of a Kafka -> Kafka pipeline without group.id is deleted.
	t.Run("kafka", func(t *testing.T) {
		pipeline := filepath.Join(t.TempDir(), "p.yaml")
		sink := fmt.Sprintf("  sink:\n    type: WriteToKafka\n    config:\n      bootstrap_servers: %s\n      topic: lost_out\n      format: JSON\n", addr)
		writeFile(t, pipeline, idsChain(addr, "lost_in", "", sink, "  name: lost_kafka\n"))
		if out, code := run(t, pipeline); code != 0 {
			t.Fatalf("first run: exit %d\n%s", code, out)
		}
		adm := kadm.NewClient(devClient(t, addr))
		if _, err := adm.DeleteTopic(context.Background(), "__sluice_checkpoints"); err != nil {
			t.Fatal(err)
		}
		out, code := run(t, pipeline)
		refused(t, out, code, "topic lost_out holds", "__sluice_checkpoints")
		if dups := checkAllIDs(t, "exactly_once", records, countIDs(t, addr, "lost_out")); dups != 0 {
			t.Errorf("%d records written twice", dups)
		}
		if out, code := run(t, pipeline, "--allow-reset-state"); code != 0 || !strings.Contains(out, "starting without a checkpoint on a target that holds data") {
			t.Fatalf("with --allow-reset-state: exit %d\n%s", code, out)
		}
		if seen := countIDs(t, addr, "lost_out"); len(seen) != records || seen[0] != 2 {
			t.Errorf("after --allow-reset-state the topic holds %d ids, id 0 %d times: want every id twice, as asked", len(seen), seen[0])
		}
	})

	// Another tool rewrote the table (a snapshot of the same files without sluice's keys) and
	// expired the snapshots before it: no snapshot holds the pipeline's checkpoint.
	t.Run("iceberg", func(t *testing.T) {
		w := icebergWarehouse{dir: t.TempDir()}
		pipeline := filepath.Join(t.TempDir(), "p.yaml")
		writeFile(t, pipeline, kafkaToIceberg(addr, "lost_in", "lost_iceberg", "exactly_once", w.sink("db.lost", "1")))
		if out, code := run(t, pipeline); code != 0 {
			t.Fatalf("first run: exit %d\n%s", code, out)
		}
		rewriteWithoutSluiceKeys(t, w, "db.lost")
		out, code := run(t, pipeline)
		refused(t, out, code, fmt.Sprintf("table db.lost holds %d rows", records))
		if dups := checkAllIDs(t, "exactly_once", records, w.ids(t, "db.lost")); dups != 0 {
			t.Errorf("%d records written twice", dups)
		}
	})
}

// rewriteWithoutSluiceKeys does to table what another writer's rewrite and snapshot expiry do,
// with iceberg-go on the catalog: a new current snapshot of the same data files whose summary
// has no sluice.* key, and every earlier snapshot removed.
func rewriteWithoutSluiceKeys(t *testing.T, w icebergWarehouse, tableName string) {
	t.Helper()
	ctx := context.Background()
	cat := w.catalog(t)
	tbl, err := w.load(t, cat, tableName)
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	cur := meta.CurrentSnapshot()
	props := iceberg.Properties{}
	for k, v := range cur.Summary.Properties {
		if !strings.HasPrefix(k, "sluice.") {
			props[k] = v
		}
	}
	parent := cur.SnapshotID
	next := table.Snapshot{SnapshotID: parent + 1, ParentSnapshotID: &parent, SequenceNumber: meta.LastSequenceNumber() + 1,
		TimestampMs: time.Now().UnixMilli(), ManifestList: cur.ManifestList, SchemaID: cur.SchemaID,
		Summary: &table.Summary{Operation: table.OpReplace, Properties: props}}
	var old []int64
	for _, s := range meta.Snapshots() {
		old = append(old, s.SnapshotID)
	}
	updates := []table.Update{table.NewAddSnapshotUpdate(&next),
		table.NewSetSnapshotRefUpdate(table.MainBranch, next.SnapshotID, table.BranchRef, 0, 0, 0),
		table.NewRemoveSnapshotsUpdate(old, false)}
	if _, _, err := cat.CommitTable(ctx, tbl.Identifier(), nil, updates); err != nil {
		t.Fatalf("rewriting %s: %v", tableName, err)
	}
}
