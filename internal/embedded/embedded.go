// Package embedded runs a Kafka-protocol broker in the process (franz-go's kfake) on a
// loopback port: `bootstrap_servers: embedded` in a pipeline, and `sluice dev kafka`. Clients
// talk to it over TCP like to any broker.
package embedded

import (
	"fmt"
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

// Start starts a broker. Topics that clients ask for are created with DefaultPartitions.
func Start(cfg Config) (*kfake.Cluster, error) {
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
	return c, nil
}

var (
	shared     sync.Once
	sharedAddr string
	sharedErr  error
)

// Addr returns the bootstrap address of the process's shared in-memory broker, starting it on
// first use. Every connector that says `bootstrap_servers: embedded` gets the same broker.
func Addr() (string, error) {
	shared.Do(func() {
		var c *kfake.Cluster
		c, sharedErr = Start(Config{Listen: "127.0.0.1:0"})
		if sharedErr == nil {
			sharedAddr = c.ListenAddrs()[0]
		}
	})
	return sharedAddr, sharedErr
}
