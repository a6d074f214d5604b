// Package logroute sends what the libraries sluice links log through their own loggers to
// log/slog's default logger, so that a run has one log stream in one format and level
// (--log-format, --log-level) with its secrets masked (docs/operations.md, "Logs").
//
// Go's log package needs nothing here: slog.SetDefault routes it. gRPC (grpclog), logrus (the
// Jinja engine, gonja) and zap (TiDB's SQL parser, through pingcap/log) write to standard
// error themselves unless told otherwise; Libraries points each at slog. Every record goes
// to the slog default of the moment it is logged, so Libraries may run before the command
// sets the default.
package logroute

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	pingcaplog "github.com/pingcap/log"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
)

// Libraries routes the libraries' loggers to slog's default logger. Call it before any gRPC
// connection is made (grpclog.SetLoggerV2 is not safe to call later); calls after the first
// do nothing.
var Libraries = sync.OnceFunc(func() {
	grpclog.SetLoggerV2(newGRPCLogger())
	logrus.SetOutput(io.Discard)
	logrus.AddHook(logrusHook{})
	core := zapCore{}
	pingcaplog.ReplaceGlobals(zap.New(core), &pingcaplog.ZapProperties{Core: core, Level: zap.NewAtomicLevelAt(zap.DebugLevel)})
})

// log logs msg at level with the library's name, through the slog default of the moment.
func log(level slog.Level, library, msg string, attrs ...slog.Attr) {
	l := slog.Default()
	ctx := context.Background()
	if l.Enabled(ctx, level) {
		l.LogAttrs(ctx, level, strings.TrimSpace(msg), append(attrs, slog.String("library", library))...)
	}
}

// grpcLogger is grpclog.LoggerV2 over slog. Like gRPC's own logger it drops what is below
// GRPC_GO_LOG_SEVERITY_LEVEL (default: error; gRPC's info and warnings are chatty, and
// sluice says itself which connections it lost) and V levels above
// GRPC_GO_LOG_VERBOSITY_LEVEL.
type grpcLogger struct {
	min       slog.Level
	verbosity int
}

func newGRPCLogger() grpcLogger {
	g := grpcLogger{min: slog.LevelError}
	switch strings.ToLower(os.Getenv("GRPC_GO_LOG_SEVERITY_LEVEL")) {
	case "info":
		g.min = slog.LevelInfo
	case "warning":
		g.min = slog.LevelWarn
	}
	g.verbosity, _ = strconv.Atoi(os.Getenv("GRPC_GO_LOG_VERBOSITY_LEVEL"))
	return g
}

func (g grpcLogger) log(level slog.Level, msg string) {
	if level >= g.min {
		log(level, "grpc", msg)
	}
}

func (g grpcLogger) Info(args ...any)   { g.log(slog.LevelInfo, fmt.Sprint(args...)) }
func (g grpcLogger) Infoln(args ...any) { g.log(slog.LevelInfo, fmt.Sprintln(args...)) }
func (g grpcLogger) Infof(format string, args ...any) {
	g.log(slog.LevelInfo, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Warning(args ...any)   { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g grpcLogger) Warningln(args ...any) { g.log(slog.LevelWarn, fmt.Sprintln(args...)) }
func (g grpcLogger) Warningf(format string, args ...any) {
	g.log(slog.LevelWarn, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Error(args ...any)   { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Errorln(args ...any) { g.log(slog.LevelError, fmt.Sprintln(args...)) }
func (g grpcLogger) Errorf(format string, args ...any) {
	g.log(slog.LevelError, fmt.Sprintf(format, args...))
}

// Fatal logs and exits, as grpclog's Fatal must.
func (g grpcLogger) Fatal(args ...any) { g.Error(args...); os.Exit(1) }

// Fatalln logs and exits, as grpclog's Fatalln must.
func (g grpcLogger) Fatalln(args ...any) { g.Errorln(args...); os.Exit(1) }

// Fatalf logs and exits, as grpclog's Fatalf must.
func (g grpcLogger) Fatalf(format string, args ...any) { g.Errorf(format, args...); os.Exit(1) }

// V reports whether verbosity level l is logged.
func (g grpcLogger) V(l int) bool { return l <= g.verbosity }

// logrusHook passes logrus's entries (its output is discarded) to slog.
type logrusHook struct{}

func (logrusHook) Levels() []logrus.Level { return logrus.AllLevels }

func (logrusHook) Fire(e *logrus.Entry) error {
	level := slog.LevelInfo
	switch {
	case e.Level <= logrus.ErrorLevel:
		level = slog.LevelError
	case e.Level == logrus.WarnLevel:
		level = slog.LevelWarn
	case e.Level >= logrus.DebugLevel:
		level = slog.LevelDebug
	}
	attrs := make([]slog.Attr, 0, len(e.Data))
	for k, v := range e.Data {
		attrs = append(attrs, slog.Any(k, v))
	}
	log(level, "logrus", e.Message, attrs...)
	return nil
}

// zapCore is a zapcore.Core that passes zap's entries to slog.
type zapCore struct{ fields []zapcore.Field }

func (zapCore) Enabled(zapcore.Level) bool { return true }

func (c zapCore) With(fields []zapcore.Field) zapcore.Core {
	return zapCore{fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

func (c zapCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c zapCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	level := slog.LevelInfo
	switch {
	case e.Level >= zapcore.ErrorLevel:
		level = slog.LevelError
	case e.Level == zapcore.WarnLevel:
		level = slog.LevelWarn
	case e.Level <= zapcore.DebugLevel:
		level = slog.LevelDebug
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(c.fields[:len(c.fields):len(c.fields)], fields...) {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	log(level, "zap", e.Message, attrs...)
	return nil
}

func (zapCore) Sync() error { return nil }
