package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/internal/embedded"
)

const devUsage = "usage: sluice dev kafka [--listen HOST:PORT] [--topic NAME:PARTITIONS]... [--data-dir DIR]\n       sluice dev bigquery [--grpc HOST:PORT] [--http HOST:PORT] [--dataset PROJECT:DATASET]... [--discard-rows]"

// devCmd runs development services: `sluice dev kafka` is a Kafka-protocol broker, `sluice dev
// bigquery` a BigQuery Storage Write API server.
func devCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, devUsage)
		return exitUsage
	}
	switch args[0] {
	case "kafka":
		return devKafka(args[1:], stdout, stderr)
	case "bigquery":
		return devBigQuery(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "sluice dev: unknown service %q%s\n%s\n", args[0], diag.DidYouMean(args[0], []string{"kafka", "bigquery"}), devUsage)
	return exitUsage
}

// topicFlags collects --topic NAME:PARTITIONS.
type topicFlags map[string]int32

// kafkaTopicName is what Kafka accepts as a topic name.
var kafkaTopicName = lazyRegexp(`^[a-zA-Z0-9._-]{1,249}$`)

func (t topicFlags) String() string { return "" }

func (t topicFlags) Set(v string) error {
	name, count, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("%q: write NAME:PARTITIONS, e.g. events:8", v)
	}
	if !kafkaTopicName().MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("%q: a topic name is 1 to 249 letters, digits, '.', '_' or '-'", name)
	}
	n, err := strconv.ParseInt(count, 10, 32)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: the number of partitions must be a whole number of at least 1", v)
	}
	if _, dup := t[name]; dup {
		return fmt.Errorf("topic %q is given twice", name)
	}
	t[name] = int32(n)
	return nil
}

func devKafka(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev kafka", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9092", "the host:port to listen on (port 0: any free port)")
	topics := topicFlags{}
	fs.Var(topics, "topic", "create topic NAME with PARTITIONS partitions (repeatable); other topics are created on first use")
	dataDir := fs.String("data-dir", "", "keep the broker's data in this directory across restarts (default: in memory)")
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "sluice dev kafka: unexpected argument %q\n%s\n", pos[0], devUsage)
		return exitUsage
	}
	if _, port, err := net.SplitHostPort(*listen); err != nil || port == "" {
		fmt.Fprintf(stderr, "sluice dev kafka: --listen %q: write HOST:PORT, e.g. 127.0.0.1:9092\n", *listen)
		return exitUsage
	}
	if *dataDir != "" {
		if err := os.MkdirAll(*dataDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "sluice dev kafka: --data-dir: %v\n", err)
			return exitRuntime
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cluster, err := embedded.Start(embedded.Config{Listen: *listen, Topics: topics, DataDir: *dataDir})
	if err != nil {
		fmt.Fprintf(stderr, "sluice dev kafka: %v\n", err)
		return exitRuntime
	}
	if cluster.Recovered != nil {
		fmt.Fprintf(stdout, "sluice dev kafka: %s\n", cluster.Recovered)
	}
	printConnectHelp(stdout, cluster.ListenAddrs()[0], topics, *dataDir)
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping the broker")
	cluster.Close()
	fmt.Fprintln(stdout, "stopped")
	return exitOK
}

func printConnectHelp(w io.Writer, addr string, topics topicFlags, dataDir string) {
	fmt.Fprintf(w, "sluice dev kafka: a Kafka-protocol broker (franz-go's kfake) is listening on %s\n", addr)
	names := make([]string, 0, len(topics))
	for name := range topics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  topic %s: %d partitions\n", name, topics[name])
	}
	fmt.Fprintf(w, "  other topics are created on first use with %d partitions\n", embedded.DefaultPartitions)
	if dataDir != "" {
		fmt.Fprintf(w, "  data is kept in %s across restarts\n", dataDir)
	} else {
		fmt.Fprintln(w, "  data is in memory and goes when the broker stops (--data-dir DIR keeps it)")
	}
	fmt.Fprintf(w, "\nIn a pipeline (ReadFromKafka, WriteToKafka):\n  bootstrap_servers: %s\n", addr)
	fmt.Fprintf(w, "From a client:\n  kcat -b %s -L\n  kgo.NewClient(kgo.SeedBrokers(%q))\n", addr, addr)
	fmt.Fprintln(w, "\nPress Ctrl-C to stop.")
}
