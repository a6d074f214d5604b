package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"
)

// bqProject and bqDataset are where the kafka-bigquery scenarios write, on `sluice dev
// bigquery` (sluice's loopback Storage Write API server) in its own process, so that its CPU
// is not counted.
const bqProject, bqDataset = "sluice-bench", "ds"

// bigQueryServer is a running `sluice dev bigquery`.
type bigQueryServer struct {
	endpoint, storage string // the REST base URL and the gRPC host:port
	stop              func()
}

// startBigQuery starts `sluice dev bigquery`, keeping row counts but not rows
// (--discard-rows): a benchmark writes more than is worth holding.
func (e *env) startBigQuery(ctx context.Context) (*bigQueryServer, error) {
	cmd := exec.CommandContext(ctx, e.sluice, "dev", "bigquery", "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--dataset", bqProject+":"+bqDataset, "--discard-rows")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting sluice dev bigquery: %w", err)
	}
	s := &bigQueryServer{stop: func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }}
	sc := bufio.NewScanner(out)
	for (s.endpoint == "" || s.storage == "") && sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "endpoint: "); ok {
			s.endpoint = v
		} else if v, ok := strings.CutPrefix(line, "storage_endpoint: "); ok {
			s.storage = v
		}
	}
	if s.endpoint == "" || s.storage == "" {
		s.stop()
		return nil, fmt.Errorf("sluice dev bigquery printed no endpoints")
	}
	go func() { // keep draining its output
		for sc.Scan() {
		}
	}()
	return s, nil
}

// sink is the WriteToBigQuery sink of a scenario writing table. It keeps its state where it
// does by default, in the Kafka source's checkpoint topic.
func (s *bigQueryServer) sink(table, trigger string) string {
	return fmt.Sprintf("  sink:\n    type: WriteToBigQuery\n    config:\n      table: %s:%s.%s\n      endpoint: %s\n      storage_endpoint: %s\n      triggering_frequency_seconds: %s\n",
		bqProject, bqDataset, table, s.endpoint, s.storage, trigger)
}

// rows returns the number of rows committed to table, as tables.get reports it.
func (s *bigQueryServer) rows(ctx context.Context, table string) (int64, error) {
	cl, err := bigquery.NewClient(ctx, bqProject, option.WithEndpoint(s.endpoint), option.WithoutAuthentication())
	if err != nil {
		return 0, fmt.Errorf("%w", err)
	}
	defer cl.Close()
	md, err := cl.Dataset(bqDataset).Table(table).Metadata(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading table %s: %w", table, err)
	}
	return int64(md.NumRows), nil
}
