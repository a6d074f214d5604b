package runner_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirection holds the layering of DESIGN.md section 1 (with component/ as the
// contract between the runner and components, docs/architecture.md):
// cmd -> runner -> {templates, transforms, connectors} -> component -> schemas -> internal.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/sluicehq/sluice/"
	list := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...")
	list.Dir = ".." // the whole module, not only runner
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layer := func(pkg string) string {
		p := strings.TrimPrefix(pkg, mod)
		for _, l := range []string{"cmd", "bench", "chaos", "deploy", "runner", "templates", "transforms", "connectors", "component", "schemas", "internal"} {
			if p == l || strings.HasPrefix(p, l+"/") {
				return l
			}
		}
		return "other"
	}
	// allowed[a] lists the layers a package of layer a may import (besides its own).
	allowed := map[string][]string{
		"cmd": {"runner", "templates", "transforms", "connectors", "component", "schemas", "internal"},
		// The tools that run the sluice binary from outside: they may use any layer's helpers.
		"bench":      {"runner", "templates", "transforms", "connectors", "component", "schemas", "internal"},
		"chaos":      {"runner", "templates", "transforms", "connectors", "component", "schemas", "internal"},
		"deploy":     {}, // the image's and the manifests' tests, which build and run the binary
		"runner":     {"templates", "transforms", "connectors", "component", "schemas", "internal"},
		"templates":  {"component", "schemas", "internal"},
		"transforms": {"component", "schemas", "internal"},
		"connectors": {"component", "schemas", "internal"},
		"component":  {"schemas", "internal"},
		"schemas":    {"internal"},
		"internal":   {},
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
