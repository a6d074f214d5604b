package acceptance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/connectors/files"
)

// SIGINT and SIGTERM stop a run gracefully: it stops reading, commits what it read, says so
// and exits 0; the next run continues where it stopped.
func TestSignalStopsGracefully(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			ids := writeInput(t, in, 8, 100_000)
			pipeline := filepath.Join(dir, "p.yaml")
			writeFile(t, pipeline, fmt.Sprintf(`pipeline:
  type: chain
  source:
    type: ReadFromJson
    config:
      path: %s
      schema: {type: object, properties: {id: {type: integer}, name: {type: string}, amount: {type: number}}}
  sink:
    type: WriteToJson
    config:
      path: %s
options:
  checkpoint_interval: 1h
`, in, filepath.Join(dir, "out")))

			// The signal comes once the pipeline runs: before the Go runtime has started,
			// a signal kills any process.
			run := startSluice(t, "run", nil, "run", pipeline)
			run.waitFor(t, "pipeline started", 30*time.Second)
			time.Sleep(100 * time.Millisecond)
			_ = run.cmd.Process.Signal(sig)
			if err := run.wait(30 * time.Second); err != nil {
				t.Fatalf("exit: %v\n%s", err, run.log())
			}
			stdout := run.log()
			m := regexp.MustCompile(`read (\d+) records`).FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("no summary in the output:\n%s", stdout)
			}
			read, _ := strconv.Atoi(m[1])
			lines, err := files.ReadCommitted(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != read {
				t.Fatalf("read %d records but committed %d: the last epoch was not committed", read, len(lines))
			}
			if read == len(ids) {
				t.Fatalf("the run read all %d records before the signal; it needs more input", read)
			}
			t.Logf("%s after 100 ms: read and committed %d of %d records", sig, read, len(ids))
			out, err := exec.Command(binary, "run", pipeline).CombinedOutput()
			if err != nil {
				t.Fatalf("second run: %v\n%s", err, out)
			}
			lines, err = files.ReadCommitted(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(ids) {
				t.Fatalf("after the second run: %d rows, want %d", len(lines), len(ids))
			}
		})
	}
}
