// Package embedded runs a Kafka-protocol broker in the process (franz-go's kfake) on a
// loopback port: `bootstrap_servers: embedded` in a pipeline, and `sluice dev kafka`. Clients
// talk to it over TCP like to any broker.
package embedded

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// DefaultPartitions is the partition count of topics the embedded broker creates on first use.
const DefaultPartitions = 8

// Config configures a broker.
type Config struct {
	// Listen is the host:port to listen on; "" picks a free loopback port.
	Listen string
	// Topics are created at start: name -> partitions.
	Topics map[string]int32
	// DataDir keeps the broker's data across restarts; "" keeps it in memory.
	DataDir string
}

// Broker is a running broker. Close it to stop it: with a data directory, that saves its
// state and notes the clean stop, so the next start on the directory need not recover it.
type Broker struct {
	*kfake.Cluster
	dir string
	// Recovered is set when the broker's data directory had not been closed cleanly and
	// Start made its log consistent first.
	Recovered *Recovery
}

// Close stops the broker.
func (b *Broker) Close() {
	b.Cluster.Close()
	if b.dir != "" {
		_ = setClean(b.dir, true) // without the note, the next start recovers: slower, not wrong
	}
}

// Start starts a broker. Topics that clients ask for are created with DefaultPartitions.
//
// With a data directory that the last broker on it did not close (it was killed), Start first
// recovers the log (recoverDir): it ends the transactions left open, and refuses to serve a log
// it cannot make consistent (ErrUnrecoverable).
func Start(cfg Config) (*Broker, error) {
	b := &Broker{dir: cfg.DataDir}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("the embedded Kafka broker's data directory: %w", err)
		}
		unclean, err := uncleanDir(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("the embedded Kafka broker's data directory: %w", err)
		}
		if unclean {
			if b.Recovered, err = recoverDir(cfg.DataDir); err != nil {
				hint := ""
				if errors.Is(err, ErrUnrecoverable) {
					hint = fmt.Sprintf("; the broker does not serve it. To start over, remove %s (its topics, records and checkpoints go with it)", cfg.DataDir)
				}
				return nil, fmt.Errorf("recovering the embedded Kafka broker's data in %s, which was not stopped cleanly: %w%s", cfg.DataDir, err, hint)
			}
		}
		if err := setClean(cfg.DataDir, false); err != nil {
			return nil, err
		}
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(DefaultPartitions),
	}
	if cfg.Listen != "" {
		opts = append(opts, kfake.ListenFn(listenOn(cfg.Listen)))
	}
	for name, n := range cfg.Topics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir), kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded Kafka broker: %w", err)
	}
	b.Cluster = c
	return b, nil
}

var (
	sharedMu  sync.Mutex
	shared    = map[string]string{}  // data dir ("": in memory) -> the broker's address
	running   = map[string]*Broker{} // the shared brokers with a data directory, for CloseDirs
	inMemory  *Broker                // the shared in-memory broker: it lives as long as the process
	snapshots bool
	copies    []copied // brokers started on snapshots, for CloseSnapshots
)

type copied struct {
	c   *Broker
	dir string
}

// Addr returns the bootstrap address of the process's shared in-memory broker, starting it on
// first use. Every connector that says `bootstrap_servers: embedded` gets the same broker.
func Addr() (string, error) { return AddrIn("") }

// AddrIn returns the address of the process's shared broker whose data is in dir ("": in
// memory), starting it on first use: `bootstrap_servers: embedded:DIR`. Connectors that name
// the same directory share one broker; with a directory, a later run finds the topics, records,
// transactions and consumer groups of the earlier ones.
func AddrIn(dir string) (string, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if addr, ok := shared[dir]; ok {
		return addr, nil
	}
	data := dir
	if dir != "" && snapshots {
		var err error
		if data, err = snapshot(dir); err != nil {
			return "", err
		}
	}
	c, err := Start(Config{Listen: "127.0.0.1:0", DataDir: data})
	if err != nil {
		return "", err
	}
	if data != dir {
		copies = append(copies, copied{c, data})
	} else if dir != "" {
		running[dir] = c
	} else {
		inMemory = c
	}
	shared[dir] = c.ListenAddrs()[0]
	return shared[dir], nil
}

// CloseDirs stops the process's shared brokers that keep their data in a directory, so that
// they leave it closed cleanly and the next run on it starts without recovering it. Called
// when a run ends; a process killed before it leaves the directory to recovery. The in-memory
// broker stays: it has nothing to leave, and a later run in the same process (tests) reads
// what an earlier one wrote there.
func CloseDirs() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for dir, b := range running {
		b.Close()
		delete(shared, dir)
	}
	running = map[string]*Broker{}
}

// UseSnapshots makes the brokers that AddrIn starts from then on run on a temporary copy of
// their data directory, so that a reader (`sluice status`) never writes into the data of a
// pipeline that may be running.
func UseSnapshots() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	snapshots = true
}

// CloseSnapshots stops the brokers started on copies and removes the copies.
func CloseSnapshots() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, cp := range copies {
		cp.c.Close()
		_ = os.RemoveAll(cp.dir)
	}
	copies = nil
	for dir := range shared {
		if dir != "" {
			delete(shared, dir)
		}
	}
}
