package component

import (
	"errors"
	"net"
	"syscall"

	"github.com/sluicehq/sluice/internal/outage"
)

// ErrUnavailable marks a failure to reach an outside service (a broker, a schema registry, a
// catalog) rather than a problem of the pipeline: wrap it (errors.Is) in such errors. The
// runner opens a component that fails so again, with backoff, until its startup timeout.
// It is internal/outage's, so that clients below component wrap the same error.
var ErrUnavailable = outage.ErrUnavailable

// Unreachable reports whether err says an outside service could not be reached: it wraps
// ErrUnavailable, or a network failure (a refused, reset or timed-out connection, a host
// name that does not resolve yet, a network that is down).
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var dns *net.DNSError
	var ne net.Error
	return errors.As(err, &dns) || (errors.As(err, &ne) && ne.Timeout())
}
