package javascript

import (
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// rowTimeout bounds one row's call (a variable for the test of the bound).
var rowTimeout = time.Second

// watchdog interrupts a lane's call that has run for between one and two rowTimeouts, so that
// a loop that never ends fails its row instead of hanging the run. Arming a timer per call
// cost a quarter of a callable's throughput; instead a call only marks itself busy and
// counts, and a timer armed while the lane is in use ticks every rowTimeout: a busy lane
// whose count did not move since the last tick is stuck. An idle lane's timer stops.
type watchdog struct {
	rt      *goja.Runtime
	timeout time.Duration
	timer   *time.Timer
	busy    atomic.Bool
	armed   atomic.Bool
	calls   atomic.Uint64
	seen    atomic.Uint64 // calls at the last tick
}

func newWatchdog(rt *goja.Runtime, timeout time.Duration) *watchdog {
	w := &watchdog{rt: rt, timeout: timeout}
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

func (w *watchdog) enter() {
	w.busy.Store(true)
	w.calls.Add(1)
	// An interrupt meant for the previous call that came after it ended must not fail this one.
	w.rt.ClearInterrupt()
	if w.armed.CompareAndSwap(false, true) {
		w.seen.Store(w.calls.Load())
		w.timer.Reset(w.timeout)
	}
}

func (w *watchdog) exit() { w.busy.Store(false) }

func (w *watchdog) tick() {
	if !w.busy.Load() {
		w.armed.Store(false)
		// A call that began between the load and the store saw armed still true: arm again.
		if !w.busy.Load() || !w.armed.CompareAndSwap(false, true) {
			return
		}
	} else if n := w.calls.Load(); n == w.seen.Load() {
		w.rt.Interrupt("timeout")
	} else {
		w.seen.Store(n)
	}
	w.timer.Reset(w.timeout)
}
