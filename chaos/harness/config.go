// Package harness is the chaos tool's engine (issue #15, QUALITY.md layer 8): for every sink
// and delivery it runs copies of one Kafka -> MapToFields -> sink pipeline as `sluice run`
// processes in one consumer group, on a `sluice dev kafka` broker of its own, while a producer
// writes records with unique ids; a seeded schedule SIGKILLs, SIGTERMs and SIGSTOPs (past the
// group session) the copies and SIGKILLs and restarts the broker; then it drains the copies
// and counts the sink's rows per id with a reader that shares no code with sluice's sinks
// (franz-go and kcat for Kafka, an iceberg-go scan, the BigQuery client library, the files
// read directly). `go run ./chaos` is the command line; chaos_test.go runs a short round.
package harness

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The sinks a scenario can write, and the delivery modes.
const (
	SinkKafka    = "kafka"
	SinkIceberg  = "iceberg"
	SinkBigQuery = "bigquery"
	SinkFiles    = "files"
	// SinkWindows is a keyed windowed grouping across the copies into WriteToKafka
	// (windows.go): exactly once only, at least 3 copies.
	SinkWindows = "windows"

	ExactlyOnce  = "exactly_once"
	AtLeastOnce  = "at_least_once"
	sessionTimer = 6 * time.Second // session.timeout.ms of the copies' consumer group
)

// AllSinks and AllDeliveries are the defaults of Config.
var (
	AllSinks      = []string{SinkKafka, SinkIceberg, SinkBigQuery, SinkFiles, SinkWindows}
	AllDeliveries = []string{ExactlyOnce, AtLeastOnce}
)

// Config is one chaos run: a scenario for every sink and delivery.
type Config struct {
	// Sluice is the sluice binary; empty: Run builds ./cmd/sluice into Dir.
	Sluice string
	// Dir holds the scenarios' brokers, tables, files and logs; Run needs it to exist.
	Dir        string
	Sinks      []string
	Deliveries []string
	// Copies is the number of copies of each grouped pipeline (the files sinks are
	// single-writer: always one copy, no group).
	Copies int
	// Duration is how long the producer runs and the faults happen, per scenario.
	Duration time.Duration
	Seed     uint64
	// Rate is the records per second produced into each scenario's input topic.
	Rate       int
	Partitions int
	// Faults is the copy faults (SIGKILL, SIGTERM, SIGSTOP past the session, in the ratio
	// 2:1:1) per minute per scenario.
	Faults float64
	// BrokerRestarts is the broker SIGKILL-and-restarts per minute in each scenario whose sink
	// is in BrokerSinks.
	BrokerRestarts float64
	BrokerSinks    []string
	// Parallel is how many scenarios run at once (0: all).
	Parallel int
	// DrainTimeout bounds the wait for the copies to catch up once the producer stops (and,
	// plus a minute, the final --stop-at-end run when they did not).
	DrainTimeout time.Duration
	// Log receives progress lines; nil: none.
	Log io.Writer
}

// Defaults is a run of a few minutes on a small machine.
func Defaults() Config {
	return Config{
		Sinks: AllSinks, Deliveries: AllDeliveries, Copies: 3, Duration: 2 * time.Minute,
		Seed: 1, Rate: 200, Partitions: 8, Faults: 6, BrokerRestarts: 0.5, BrokerSinks: AllSinks,
		DrainTimeout: 2 * time.Minute,
	}
}

// Soak is the long run whose table RELIABILITY.md keeps: 8 scenarios for 15 minutes, 4 copy
// faults a minute each (480 faults, 240 of them SIGKILLs) and a broker restart every 7.5
// minutes each (16 broker restarts).
func Soak() Config {
	c := Defaults()
	c.Duration, c.Faults, c.BrokerRestarts, c.Rate = 15*time.Minute, 4, 2.0/15, 100
	return c
}

// Check reports what is wrong with c.
func (c Config) Check() error {
	var errs []string
	for _, s := range c.Sinks {
		if !slices.Contains(AllSinks, s) {
			errs = append(errs, fmt.Sprintf("unknown sink %q (want %s)", s, strings.Join(AllSinks, ", ")))
		}
	}
	for _, s := range c.BrokerSinks {
		if !slices.Contains(AllSinks, s) {
			errs = append(errs, fmt.Sprintf("unknown sink %q in the broker-restart sinks (want %s)", s, strings.Join(AllSinks, ", ")))
		}
	}
	for _, d := range c.Deliveries {
		if !slices.Contains(AllDeliveries, d) {
			errs = append(errs, fmt.Sprintf("unknown delivery %q (want %s)", d, strings.Join(AllDeliveries, ", ")))
		}
	}
	if len(c.Sinks) == 0 || len(c.Deliveries) == 0 {
		errs = append(errs, "no scenario: give at least one sink and one delivery")
	}
	if c.Copies < 1 || c.Rate < 1 || c.Partitions < 1 || c.Duration <= 0 || c.Faults < 0 || c.BrokerRestarts < 0 {
		errs = append(errs, "copies, rate, partitions and duration must be positive, faults and broker restarts not negative")
	}
	if len(errs) > 0 {
		return fmt.Errorf("chaos config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// scenarioSpec is one sink and delivery of a run.
type scenarioSpec struct {
	sink, delivery string
	copies         int
	brokerRestarts bool
	seed           uint64
}

func (s scenarioSpec) name() string { return s.sink + "_" + s.delivery }

// grouped says whether the copies share a consumer group: every sink but the single-writer
// files sink.
func (s scenarioSpec) grouped() bool { return s.sink != SinkFiles }

func (c Config) scenarios() []scenarioSpec {
	var out []scenarioSpec
	for _, sink := range c.Sinks {
		for _, d := range c.Deliveries {
			copies := c.Copies
			switch {
			case sink == SinkFiles:
				copies = 1
			case sink == SinkWindows && d != ExactlyOnce:
				continue // a grouping's results are exact or not worth counting
			case sink == SinkWindows:
				copies = max(copies, 3)
			}
			out = append(out, scenarioSpec{sink: sink, delivery: d, copies: copies,
				brokerRestarts: slices.Contains(c.BrokerSinks, sink),
				seed:           c.Seed*1_000_003 + uint64(len(out))})
		}
	}
	return out
}
