package runner_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencyDirection holds the layering of DESIGN.md section 1 (with component/ as the
// contract between the runner and components, and formats/ as the codecs' config below the
// connectors, docs/architecture.md):
// cmd -> tools -> runner -> {templates, transforms, connectors} -> formats -> component -> schemas -> internal,
// where tools are the commands' logic that uses a plan without running it (diff, pipeline
// tests, status); the outside tools below may use any of it but cmd.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/sluicehq/sluice/"
	list := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...")
	list.Dir = ".." // the whole module, not only runner
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	// The product's layers, top to bottom. The outside tools (the bench, the chaos run, the
	// acceptance tests that run the binary, the conformance corpora that run pipelines
	// in-process, the deploy checks of the image and manifests) may use any product layer but
	// cmd, and none of them uses another.
	product := []string{"cmd", "tools", "runner", "templates", "transforms", "connectors", "formats", "component", "schemas", "internal"}
	outside := []string{"bench", "chaos", "acceptance", "conformance", "deploy"}
	layer := func(pkg string) string {
		p := strings.TrimPrefix(pkg, mod)
		for _, l := range append(slices.Clone(product), outside...) {
			if p == l || strings.HasPrefix(p, l+"/") {
				return l
			}
		}
		return "other"
	}
	// allowed[a] lists the layers a package of layer a may import (besides its own).
	allowed := map[string][]string{
		"cmd":        {"tools", "runner", "templates", "transforms", "connectors", "formats", "component", "schemas", "internal"},
		"tools":      {"runner", "templates", "transforms", "connectors", "formats", "component", "schemas", "internal"},
		"runner":     {"templates", "transforms", "connectors", "formats", "component", "schemas", "internal"},
		"templates":  {"component", "schemas", "internal"},
		"transforms": {"component", "schemas", "internal"},
		"connectors": {"formats", "component", "schemas", "internal"},
		"formats":    {"component", "schemas", "internal"},
		"component":  {"schemas", "internal"},
		"schemas":    {"internal"},
		"internal":   {},
	}
	for _, o := range outside {
		allowed[o] = product[1:]
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		from := layer(pkg)
		for _, d := range deps {
			if !strings.HasPrefix(d, mod) {
				continue
			}
			to := layer(d)
			checked++
			if to == from && from != "connectors" {
				continue
			}
			ok := false
			for _, a := range allowed[from] {
				ok = ok || a == to
			}
			// Connectors never import each other, except the registry package that lists them.
			if from == "connectors" && to == "connectors" {
				ok = strings.HasSuffix(pkg, "/connectors/all") || d == pkg || strings.HasPrefix(d, mod+"connectors/connectortest")
			}
			if !ok {
				t.Errorf("%s imports %s: %s may not depend on %s", pkg, d, from, to)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no project imports were checked; is go list reading the module?")
	}
}
