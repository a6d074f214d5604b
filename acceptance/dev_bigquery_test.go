package acceptance

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"
)

// `sluice dev bigquery` prints the endpoints to give WriteToBigQuery, serves the datasets it
// was asked for through the REST API, and stops on SIGINT.
func TestDevBigQuery(t *testing.T) {
	t.Parallel()
	cmd, sc, endpoint, _ := startDevBigQuery(t, "dev-project:shop")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := bigquery.NewClient(ctx, "dev-project", option.WithEndpoint(endpoint), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Dataset("shop").Metadata(ctx); err != nil {
		t.Fatalf("dataset shop through the printed endpoint: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if err := cmd.Wait(); err != nil || len(rest) == 0 || rest[len(rest)-1] != "stopped" {
		t.Fatalf("after SIGINT: %v, printed %q", err, rest)
	}
}

// startDevBigQuery starts `sluice dev bigquery` with a dataset (PROJECT:DATASET), killed when
// the test ends, and returns it, the scanner of its stdout after the endpoints, and the
// endpoints it printed.
func startDevBigQuery(t *testing.T, dataset string) (cmd *exec.Cmd, sc *bufio.Scanner, endpoint, storage string) {
	t.Helper()
	cmd = exec.Command(binary, "dev", "bigquery", "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--dataset", dataset)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc = bufio.NewScanner(out)
	for (endpoint == "" || storage == "") && sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "endpoint: "); ok {
			endpoint = v
		} else if v, ok := strings.CutPrefix(line, "storage_endpoint: "); ok {
			storage = v
		}
	}
	if endpoint == "" || storage == "" {
		t.Fatalf("no endpoints printed (endpoint %q, storage_endpoint %q)", endpoint, storage)
	}
	return cmd, sc, endpoint, storage
}
