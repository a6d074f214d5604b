package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/connectors/files"
)

// The README's first command: the quickstart runs, says what it wrote, and writes it; a second
// run resumes and writes nothing twice.
func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(repoRoot(t), "examples"))); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		cmd := exec.Command(binary, "run", "examples/quickstart.yaml")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("quickstart: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run()
	for _, want := range []string{
		"read 42 records", "2 records to error outputs",
		"enriched: wrote 36 rows; committed through epoch 1 in out/quickstart/orders",
		"dead_letters: wrote 2 rows",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out)
		}
	}
	orders, err := files.ReadCommitted(filepath.Join(dir, "out/quickstart/orders"))
	if err != nil || len(orders) != 36 {
		t.Fatalf("%d orders written (%v), want 36", len(orders), err)
	}
	for _, l := range orders {
		var o struct {
			Quantity  int64
			UnitPrice float64 `json:"unit_price"`
			Total     float64
			Country   string
			Region    string
		}
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatal(err)
		}
		eu := o.Country == "DE" || o.Country == "FR"
		if o.Quantity <= 0 || o.Total != float64(o.Quantity)*o.UnitPrice || (o.Region == "EU") != eu {
			t.Errorf("wrong order row: %s", l)
		}
	}
	dead, err := files.ReadCommitted(filepath.Join(dir, "out/quickstart/dead_letters"))
	if err != nil || len(dead) != 2 {
		t.Fatalf("%d dead letters (%v), want 2", len(dead), err)
	}
	var d struct {
		FailedRow    string `json:"failed_row"`
		ErrorMessage string `json:"error_message"`
		Source       struct {
			Topic  string
			Offset int64
		}
	}
	if err := json.Unmarshal(dead[0], &d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.FailedRow, `"quantity": "two"`) || !strings.Contains(d.ErrorMessage, `field "quantity"`) ||
		!strings.HasSuffix(d.Source.Topic, "examples/data/orders.jsonl") || d.Source.Offset <= 0 {
		t.Errorf("dead letter does not say what failed and where: %s", dead[0])
	}

	if again := run(); !strings.Contains(again, "read 0 records") || !strings.Contains(again, "enriched: wrote 0 rows") {
		t.Errorf("second run wrote again:\n%s", again)
	}
}

// Every example runs to its end with no services.
func TestExamplesRun(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.yaml"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(repoRoot(t), "examples"))); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "run", filepath.Join("examples", filepath.Base(f)), "--for", "30s")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "committed") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}
