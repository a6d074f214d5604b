package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sluicehq/sluice/internal/bqfake"
)

// datasetFlags collects --dataset PROJECT:DATASET.
type datasetFlags [][2]string

func (d *datasetFlags) String() string { return "" }

func (d *datasetFlags) Set(v string) error {
	project, ds, ok := strings.Cut(v, ":")
	if !ok || project == "" || ds == "" || strings.ContainsAny(ds, ".:") {
		return fmt.Errorf("%q: write PROJECT:DATASET, e.g. my-project:analytics", v)
	}
	*d = append(*d, [2]string{project, ds})
	return nil
}

// devBigQuery runs sluice's BigQuery Storage Write API server on loopback (the one its tests
// use), with the REST calls that create and read tables.
func devBigQuery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev bigquery", flag.ContinueOnError)
	grpcAddr := fs.String("grpc", "127.0.0.1:9060", "the host:port of the Storage Write API (gRPC, plaintext)")
	httpAddr := fs.String("http", "127.0.0.1:9050", "the host:port of the REST API (tables)")
	var datasets datasetFlags
	fs.Var(&datasets, "dataset", "create dataset PROJECT:DATASET (repeatable)")
	discard := fs.Bool("discard-rows", false, "count rows without keeping them (for benchmarks that write more than fits in memory)")
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "sluice dev bigquery: unexpected argument %q\n%s\n", pos[0], devUsage)
		return exitUsage
	}
	var opts []bqfake.Option
	if *discard {
		opts = append(opts, bqfake.DiscardRows())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := bqfake.Start(bqfake.ListenConfig{GRPC: *grpcAddr, HTTP: *httpAddr}, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "sluice dev bigquery: %v\n", err)
		return exitRuntime
	}
	defer srv.Close()
	for _, d := range datasets {
		if err := srv.CreateDataset(d[0], d[1]); err != nil {
			fmt.Fprintf(stderr, "sluice dev bigquery: %v\n", err)
			return exitRuntime
		}
	}
	fmt.Fprintf(stdout, "sluice dev bigquery: a BigQuery Storage Write API server (sluice's test server) is listening\n")
	fmt.Fprintf(stdout, "  Storage Write API (gRPC): %s\n  REST: %s/bigquery/v2/\n", srv.GRPCAddr(), srv.HTTPURL())
	for _, d := range datasets {
		fmt.Fprintf(stdout, "  dataset %s:%s\n", d[0], d[1])
	}
	fmt.Fprintf(stdout, "  data is in memory and goes when the server stops\n\nIn WriteToBigQuery's config:\n  endpoint: %s/bigquery/v2/\n  storage_endpoint: %s\n\nPress Ctrl-C to stop.\n",
		srv.HTTPURL(), srv.GRPCAddr())
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopped")
	return exitOK
}
