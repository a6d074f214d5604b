// Package outage logs the connection losses of the outside services a pipeline uses (Kafka
// brokers, schema registries, Iceberg catalogs): a WARN when one starts, again every
// Repeat while it lasts, with how long it has lasted, and an INFO when it ends, with its
// length. The clients retry on their own; without this a broker outage is a quiet pipeline.
//
// A Watch is shared by every client of one service address in the process, so that one outage
// is one report however many clients notice it.
package outage

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRepeat is how often a lasting outage is logged again.
const DefaultRepeat = 30 * time.Second

var repeat atomic.Int64

func init() { repeat.Store(int64(DefaultRepeat)) }

// SetRepeat sets how often a lasting outage is logged again (sluice run
// --outage-log-interval).
func SetRepeat(d time.Duration) {
	if d > 0 {
		repeat.Store(int64(d))
	}
}

// grace is how long a failure must go unanswered by a success before it is an outage: a
// connection the broker closed, replaced at once, is not one.
var grace = time.Second

// Watch follows the connection to one service address.
type Watch struct {
	service  string // what the address is, for messages: "Kafka broker", "schema registry"
	addr     string // never with credentials
	retrying string // what waits and is tried again while the service is away

	failing atomic.Bool // the fast path of OK, which runs on every successful request
	mu      sync.Mutex
	down    bool      // an outage was logged and has not ended
	since   time.Time // the first failure
	lastErr string
	timer   *time.Timer // confirms the outage, then repeats its report
}

type key struct{ service, addr string }

var (
	mu      sync.Mutex
	watches = map[key]*Watch{}
)

// For returns the watch of service at addr (which must not hold credentials); retrying says
// what is retried while it is away.
func For(service, addr, retrying string) *Watch {
	mu.Lock()
	defer mu.Unlock()
	k := key{service, addr}
	w := watches[k]
	if w == nil {
		w = &Watch{service: service, addr: addr, retrying: retrying}
		watches[k] = w
	}
	return w
}

// Failed reports that reaching the service failed with err. Unless a success follows
// within a second, this starts an outage.
func (w *Watch) Failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastErr = err.Error()
	if w.failing.Load() {
		return
	}
	w.since = time.Now()
	w.failing.Store(true)
	w.timer = time.AfterFunc(grace, w.report)
}

// report logs the outage: its start, then again every Repeat while it lasts.
func (w *Watch) report() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.failing.Load() {
		return
	}
	lasted := roughly(time.Since(w.since))
	if !w.down {
		w.down = true
		slog.Warn("cannot reach "+w.service+" "+w.addr+": "+w.lastErr+"; retrying "+w.retrying,
			"service", w.service, "address", w.addr, "error", w.lastErr, "retrying", w.retrying)
	} else {
		slog.Warn("still cannot reach "+w.service+" "+w.addr+" after "+lasted.String()+": "+w.lastErr+"; retrying "+w.retrying,
			"service", w.service, "address", w.addr, "error", w.lastErr, "outage", lasted.String(), "retrying", w.retrying)
	}
	w.timer = time.AfterFunc(time.Duration(repeat.Load()), w.report)
}

// OK reports that the service answered; it ends an outage.
func (w *Watch) OK() {
	if !w.failing.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.failing.Load() {
		return
	}
	w.failing.Store(false)
	w.timer.Stop()
	if w.down {
		w.down = false
		lasted := time.Since(w.since).Round(time.Millisecond)
		slog.Info("connection to "+w.service+" "+w.addr+" restored after "+lasted.String(),
			"service", w.service, "address", w.addr, "outage", lasted.String())
	}
}

// roughly rounds an outage's length for messages: to 100 ms under 10 s, else to seconds.
func roughly(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
