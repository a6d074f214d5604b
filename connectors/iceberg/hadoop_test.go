package iceberg

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

// TestHadoopCatalog writes two epochs through a Hadoop (file-system) catalog, checks the
// table's files are laid out as the Iceberg spec says (metadata/vN.metadata.json,
// version-hint.text naming the newest), and reads it back through iceberg-go's own Hadoop
// catalog, opened on the warehouse directory alone.
func TestHadoopCatalog(t *testing.T) {
	w := newHadoopWarehouse(t)
	h := harness{t: t, pipeline: "hadoop", lanes: 2}
	s := w.build(connectortest.Schema, "db.hd")
	h.open(s, "")
	d := connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: h.lanes, Source: testSource}
	for e := 1; e <= 2; e++ {
		h.write(s, connectortest.Schema, 0, (e-1)*100, e*100, idRow)
		h.flush(s, uint64(e))
		d.Commit(s, uint64(e), e*100)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	meta := filepath.Join(w.dir, "wh", "db", "hd", "metadata")
	hint, err := os.ReadFile(filepath.Join(meta, "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	newest, _ := strconv.Atoi(strings.TrimSpace(string(hint)))
	for v := 1; v <= newest; v++ {
		if _, err := os.Stat(filepath.Join(meta, "v"+strconv.Itoa(v)+".metadata.json")); err != nil {
			t.Errorf("version %d of %d: %v", v, newest, err)
		}
	}
	if newest < 3 { // created, then one snapshot per epoch
		t.Errorf("version-hint.text says %d, want at least 3", newest)
	}

	cat, err := hadoop.NewCatalog("reader", filepath.Join(w.dir, "wh"), iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "hd"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(tbl.MetadataLocation(), "v"+strconv.Itoa(newest)+".metadata.json") {
		t.Errorf("the reader loaded %s, want version %d", tbl.MetadataLocation(), newest)
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var got []int64
	for _, r := range scanRows(t, at) {
		got = append(got, r.ID)
	}
	if !slices.Equal(sorted(got), seq(0, 200)) {
		t.Fatalf("the reader sees %d ids, want 0..199 once each", len(got))
	}
	// The sink resumes from what the table holds.
	s2 := w.build(connectortest.Schema, "db.hd")
	if cp := h.open(s2, ""); cp == nil || cp.Epoch != 2 {
		t.Fatalf("reopened at %+v, want epoch 2", cp)
	}
	_ = s2.Close(context.Background())
}

// TestHadoopCommitRace: writers that loaded the same version commit at once: exactly one wins,
// the others fail cleanly with a conflict (which the sink's commit retries on the new state,
// see TestHadoopConcurrentWriter), and the table holds the winner's rows once.
func TestHadoopCommitRace(t *testing.T) {
	w := newHadoopWarehouse(t)
	h := harness{t: t, pipeline: "race", lanes: 1}
	s := w.build(connectortest.Schema, "db.race")
	h.open(s, "")
	defer s.Close(context.Background())
	connectortest.Driver{T: t, Pipeline: h.pipeline, Lanes: 1, Source: testSource}.Flush(s, 1) // creates the table

	const writers = 6
	ctx := context.Background()
	tbls := make([]*table.Table, writers)
	for i := range tbls {
		tbls[i] = w.load("db.race") // each its own catalog handle, at the same version
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			<-start
			errs[i] = appendRows(ctx, tbls[i], int64(i*10), int64(i*10+5))
		})
	}
	close(start)
	wg.Wait()
	var won []int64
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, seq(i*10, i*10+5)...)
		case !errors.Is(err, table.ErrCommitFailed) && !strings.Contains(err.Error(), "requirement failed"):
			// The catalog checks the commit's requirements against the table's newest
			// version (a loser that reads the winner's version fails them), then publishes
			// the next version by an exclusive create (a loser that raced to it fails that).
			t.Errorf("writer %d: %v, want a commit conflict", i, err)
		}
	}
	if len(won) != 5 {
		t.Errorf("%d writers won, want exactly one: %v", len(won)/5, errs)
	}
	if got := sorted(w.ids("db.race")); !slices.Equal(got, sorted(won)) {
		t.Fatalf("table holds %v, want the winner's rows %v", got, won)
	}
}

// TestHadoopConcurrentWriter is TestConcurrentWriter on a Hadoop catalog: the sink's commit
// retries when another writer's commit took its version.
func TestHadoopConcurrentWriter(t *testing.T) { concurrentWriter(t, newHadoopWarehouse(t)) }

// TestHadoopConfig: what opening a Hadoop catalog would refuse, validation refuses.
func TestHadoopConfig(t *testing.T) {
	for _, c := range []struct{ props, want string }{
		{"type: hadoop", "pipeline.yaml:5:5: catalog_properties: a hadoop catalog needs a warehouse"},
		{"type: hadoop\n    warehouse: gs://bucket/wh", "a hadoop catalog commits atomically only on a local or file:// warehouse, not gs://"},
		{"type: hadop\n    warehouse: /tmp/wh", `unknown catalog type "hadop": sluice has glue, hadoop, hive, http, https, rest, sql`},
	} {
		cfg := "type: WriteToIceberg\nconfig:\n  table: db.t\n  catalog_properties:\n    " + c.props + "\n"
		b := componenttest.Env{File: testFile}.Build(t, "", cfg, connectortest.Schema)
		if b.Err() == nil || !strings.Contains(b.Err().Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.props, b.Err(), c.want)
		}
	}
	t.Chdir(t.TempDir())
	p, err := catalogProps(&WriteConfig{CatalogProperties: map[string]string{"type": "Hadoop", "warehouse": "wh"}})
	if err != nil || p["type"] != "hadoop" || !strings.HasPrefix(p["warehouse"], "file:///") || !strings.HasSuffix(p["warehouse"], "/wh") {
		t.Fatalf("hadoop properties %v, %v", p, err)
	}
}
