package logroute

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	pingcaplog "github.com/pingcap/log"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
)

// What gRPC, logrus and zap log comes out of slog's default logger, set after Libraries as
// the command sets it, as JSON records with the library named; below the default's level
// nothing comes out.
func TestLibrariesLogThroughSlog(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	Libraries()
	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))

	grpclog.Errorf("transport: %s", "gone")
	grpclog.Info("chatty") // below gRPC's default severity
	logrus.WithField("file", "t.yaml").Warn("odd template")
	logrus.Info("below the level")
	pingcaplog.Warn("unknown collation", zap.Int("ID", 7))
	pingcaplog.Debug("below the level")

	want := []map[string]any{
		{"level": "ERROR", "msg": "transport: gone", "library": "grpc"},
		{"level": "WARN", "msg": "odd template", "library": "logrus", "file": "t.yaml"},
		{"level": "WARN", "msg": "unknown collation", "library": "zap", "ID": float64(7)},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		for k, v := range want[i] {
			if rec[k] != v {
				t.Errorf("line %d: %s = %v, want %v\n%s", i+1, k, rec[k], v, line)
			}
		}
	}
}
