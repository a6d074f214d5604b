package outage

import "errors"

// ErrUnavailable marks a failure to reach an outside service rather than a problem of the
// pipeline. component.ErrUnavailable is this error: it is defined here so that the clients
// below component (the schema registry's, in schemas/confluent) can wrap it too.
var ErrUnavailable = errors.New("the service is unavailable")
