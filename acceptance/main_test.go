package acceptance

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	// The tests that load and run pipelines in the test process (runner.Load) need every
	// component registered, as the binary has them.
	_ "github.com/sluicehq/sluice/connectors/all"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// binary is the sluice binary, built once for every test of the package.
var binary string

// The exit codes of sluice (cmd/sluice/cli.go).
const (
	exitOK      = 0
	exitRuntime = 3
)

func TestMain(m *testing.M) {
	// The tests wait on processes (brokers, copies, killed runs) far more than they compute:
	// run up to 4 at once unless -parallel says otherwise (its default is GOMAXPROCS).
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "sluice-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sluice")
	// sluicetest: the crash tests' pause hooks (PauseEnv) exist only in this build.
	if out, err := exec.Command("go", "build", "-tags", "sluicetest", "-o", binary, "../cmd/sluice").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building sluice: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sluice runs the binary with args and returns its exit code, stdout and stderr.
func sluice(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("sluice %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// repoRoot returns the repository root, where examples/ and testdata/ are.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// skipIfShort skips a test that runs for seconds (crashes, copies, outages) under
// `go test -short`, the edit loop's run; the full `go test ./...` runs it.
func skipIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("an end-to-end run of seconds; skipped with -short")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
