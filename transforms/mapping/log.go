package mapping

import (
	"context"
	"log/slog"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// LogForTestingConfig is the config of LogForTesting.
type LogForTestingConfig struct {
	Level  string `yaml:"level" enum:"DEBUG,INFO,WARN,WARNING,ERROR" doc:"Log level of the records (INFO by default)."`
	Prefix string `yaml:"prefix" doc:"Text put before each record."`
}

// SetDefaults sets the level to INFO.
func (c *LogForTestingConfig) SetDefaults() { c.Level = "INFO" }

func init() {
	component.RegisterTransform("LogForTesting", "Logs every record as JSON and passes it on unchanged.",
		component.Inputs{Min: 1, Max: 1}, buildLogForTesting)
}

type logForTesting struct {
	name   string
	level  slog.Level
	prefix string
}

var levels = map[string]slog.Level{"DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
	"WARN": slog.LevelWarn, "WARNING": slog.LevelWarn, "ERROR": slog.LevelError}

func buildLogForTesting(ctx *component.Context, cfg *LogForTestingConfig) (component.Transform, error) {
	ctx.Output(component.Main, ctx.Input())
	return &logForTesting{name: ctx.Name, level: levels[cfg.Level], prefix: cfg.Prefix}, nil
}

func (t *logForTesting) Process(ctx context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	logger := slog.Default()
	if logger.Enabled(ctx, t.level) {
		var buf []byte
		for _, row := range in.Rows {
			buf = append(buf[:0], t.prefix...)
			buf = schemas.AppendJSON(buf, in.Schema, row)
			logger.Log(ctx, t.level, string(buf), "transform", t.name)
		}
	}
	return emitRows(emit, component.Main, in)
}
