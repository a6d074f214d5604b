package acceptance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/sluicehq/sluice/runner"
)

// TestUpgrade is issue 9's acceptance test. A Kafka -> MapToFields -> Iceberg pipeline kept in
// a git work tree runs part of its input; a compatible change (a new mapped field) resumes
// exactly where it stopped, the new field present from there on; an incompatible change (another
// topic) is refused with the reason; --allow-reset-state runs it. Every snapshot records the
// spec, the sluice version and the git commit, dirty or not.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	addr := startDevKafka(t, "--topic", "up:4", "--topic", "up2:2").addr
	for topic, n := range map[string]int{"up": 2000, "up2": 2000} {
		if err := <-produceSteadily(t, addr, topic, n, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	repo, w := filepath.Join(dir, "repo"), icebergWarehouse{dir: filepath.Join(dir, "wh")}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, "pipeline.yaml")
	v1 := idsChain(addr, "up", "", w.sink("db.t", "1s", "schema_evolution: add_columns"), "  name: upgrade\n  delivery: exactly_once\n")
	writeFile(t, path, v1)
	git(repo, "init", "-q")
	git(repo, "add", "pipeline.yaml")
	git(repo, "commit", "-q", "-m", "v1")
	commit := git(repo, "rev-parse", "HEAD")
	hashV1 := specHashOf(t, path)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append([]string{"run", path}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("--max-records", "1000"); err != nil {
		t.Fatalf("v1: %v\n%s", err, out)
	}
	cat := w.catalog(t)
	tbl, err := w.load(t, cat, "db.t")
	if err != nil {
		t.Fatal(err)
	}
	v1Snapshots := len(tbl.Metadata().Snapshots())
	before := upgradeRows(t, tbl)
	if len(before) == 0 || len(before) >= 2000 {
		t.Fatalf("v1 committed %d rows, want some of the 2000", len(before))
	}

	// A compatible change, left uncommitted in the work tree: a new mapped field (nullable, as
	// a column added to a table with rows must be).
	v2 := strings.Replace(v1, "doubled: amount * 2\n", "doubled: amount * 2\n          tripled: \"amount >= 0 ? amount * 3 : nil\"\n", 1)
	writeFile(t, path, v2)
	hashV2 := specHashOf(t, path)
	if out, err := run("--stop-at-end"); err != nil {
		t.Fatalf("v2: %v\n%s", err, out)
	}
	if tbl, err = w.load(t, cat, "db.t"); err != nil {
		t.Fatal(err)
	}
	after := upgradeRows(t, tbl)
	if len(after) != 2000 {
		t.Fatalf("after the upgrade the table holds %d distinct ids, want 2000", len(after))
	}
	for id, r := range after {
		_, old := before[id]
		switch {
		case r.count != 1:
			t.Fatalf("id %d is in the table %d times", id, r.count)
		case old && r.hasTripled:
			t.Fatalf("id %d, written by v1, has the new field", id)
		case !old && (!r.hasTripled || r.tripled != 3*r.amount):
			t.Fatalf("id %d, written after the upgrade, has tripled %v (present %v), want %v", id, r.tripled, r.hasTripled, 3*r.amount)
		}
	}

	// Lineage in every snapshot of the pipeline.
	for i, snap := range tbl.Metadata().Snapshots() {
		p := snap.Summary.Properties
		if p["sluice.pipeline"] != "upgrade" {
			continue
		}
		wantHash, wantDirty := hashV1, "false"
		if i >= v1Snapshots {
			wantHash, wantDirty = hashV2, "true"
		}
		if p["sluice.spec-hash"] != wantHash || p["sluice.git-commit"] != commit || p["sluice.git-dirty"] != wantDirty || p["sluice.version"] == "" || p["sluice.shape"] == "" {
			t.Errorf("snapshot %d: lineage %q %q %q %q, want spec %s, git %s, dirty %s and a version and shape",
				i, p["sluice.spec-hash"], p["sluice.git-commit"], p["sluice.git-dirty"], p["sluice.version"], wantHash, commit, wantDirty)
		}
	}
	if out, err := exec.Command(binary, "status", path).CombinedOutput(); err != nil || !strings.Contains(string(out), "written by spec "+hashV2+", git "+commit[:12]+" with uncommitted changes") {
		t.Errorf("sluice status does not say which spec wrote the last commit: %v\n%s", err, out)
	}

	// An incompatible change: another topic for the same sink.
	writeFile(t, path, strings.Replace(v2, "topic: up\n", "topic: up2\n", 1))
	out, err := run("--stop-at-end")
	if err == nil || !strings.Contains(out, "cannot resume") || !strings.Contains(out, "read kafka topic up and now reads kafka topic up2") ||
		!strings.Contains(out, "--allow-reset-state") {
		t.Fatalf("an incompatible change: %v\n%s", err, out)
	}
	if out, err := run("--stop-at-end", "--allow-reset-state"); err != nil {
		t.Fatalf("--allow-reset-state: %v\n%s", err, out)
	}
	if tbl, err = w.load(t, cat, "db.t"); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range upgradeRows(t, tbl) {
		total += r.count
	}
	if total != 4000 {
		t.Fatalf("after --allow-reset-state the table holds %d rows, want 2000 + the 2000 of topic up2", total)
	}
}

// specHashOf is the spec hash sluice records for the pipeline file at path.
func specHashOf(t *testing.T, path string) string {
	t.Helper()
	p, err := runner.LoadWith(path, runner.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.SpecHash
}

// upgradeRow is what the table holds of one id.
type upgradeRow struct {
	count           int
	amount, tripled float64
	hasTripled      bool
}

// upgradeRows reads id, amount and tripled (when the table has it) of every row.
func upgradeRows(t *testing.T, tbl *table.Table) map[int64]*upgradeRow {
	t.Helper()
	fields := []string{"id", "amount"}
	if _, ok := tbl.Schema().FindFieldByName("tripled"); ok {
		fields = append(fields, "tripled")
	}
	at, err := tbl.Scan(table.WithSelectedFields(fields...)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 64<<10)
	defer tr.Release()
	out := map[int64]*upgradeRow{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		amounts := rec.Column(rec.Schema().FieldIndices("amount")[0]).(*array.Float64)
		var tripled *array.Float64
		if idx := rec.Schema().FieldIndices("tripled"); len(idx) > 0 {
			tripled = rec.Column(idx[0]).(*array.Float64)
		}
		for i := range int(rec.NumRows()) {
			r := out[ids.Value(i)]
			if r == nil {
				r = &upgradeRow{}
				out[ids.Value(i)] = r
			}
			r.count++
			r.amount = amounts.Value(i)
			if tripled != nil && tripled.IsValid(i) {
				r.hasTripled, r.tripled = true, tripled.Value(i)
			}
		}
	}
	return out
}
