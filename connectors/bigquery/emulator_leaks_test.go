//go:build bqemulator

package bigquery

import "go.uber.org/goleak"

// goccy/bigquery-emulator's Stop leaves its storage's database/sql pool and the gRPC server's
// callback serializers running: the emulator's goroutines, not the sink's.
func init() {
	ignoredGoroutines = append(ignoredGoroutines,
		goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"))
}
