package harness

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// faultKind is what an action does.
type faultKind int

const (
	faultKill   faultKind = iota // SIGKILL a copy, restart it after a delay
	faultTerm                    // SIGTERM a copy (graceful stop), restart it after a delay
	faultStop                    // SIGSTOP a copy past its group session, then SIGCONT
	faultBroker                  // SIGKILL the broker, restart it on the same data directory
)

func (k faultKind) String() string {
	return [...]string{"SIGKILL", "SIGTERM", "SIGSTOP", "broker SIGKILL"}[k]
}

// action is one fault of a scenario's schedule.
type action struct {
	at   time.Duration // from the scenario's start
	kind faultKind
	// pick chooses the copy among those running when the action comes (the set depends on
	// timing, the choice on the seed only).
	pick uint64
	// pause is the time the copy or broker stays down (or stopped).
	pause time.Duration
}

// schedule draws a scenario's faults: round(rate * minutes) copy faults, half SIGKILL and a
// quarter each SIGTERM and SIGSTOP, and the broker restarts, each at a random time in its own
// slot of the run so that they spread over it. The first 10% of the run is left quiet for the
// copies to start and join.
func schedule(seed uint64, d time.Duration, faults, brokerRestarts float64) []action {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := int(math.Round(faults * d.Minutes()))
	kinds := make([]faultKind, n)
	for i := range kinds {
		switch i % 4 {
		case 0, 2:
			kinds[i] = faultKill
		case 1:
			kinds[i] = faultTerm
		case 3:
			kinds[i] = faultStop
		}
	}
	rng.Shuffle(n, func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	nb := int(math.Round(brokerRestarts * d.Minutes()))
	for range nb {
		kinds = append(kinds, faultBroker)
	}
	start, span := d/10, d-d/10
	var out []action
	spread := func(kinds []faultKind) {
		for i, k := range kinds {
			slot := span / time.Duration(len(kinds))
			a := action{at: start + time.Duration(i)*slot + time.Duration(rng.Int64N(int64(slot))), kind: k, pick: rng.Uint64()}
			switch k {
			case faultKill:
				a.pause = time.Duration(200+rng.IntN(3800)) * time.Millisecond
			case faultTerm:
				a.pause = time.Duration(200+rng.IntN(1800)) * time.Millisecond
			case faultStop:
				a.pause = sessionTimer + time.Duration(1000+rng.IntN(3000))*time.Millisecond
			case faultBroker:
				a.pause = time.Duration(500+rng.IntN(2500)) * time.Millisecond
			}
			out = append(out, a)
		}
	}
	spread(kinds[:n])
	spread(kinds[n:])
	slices.SortStableFunc(out, func(a, b action) int { return int(a.at - b.at) })
	return out
}
