package mapping

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// AssignTimestampsConfig is the config of AssignTimestamps.
type AssignTimestampsConfig struct {
	Timestamp     yaml.Node                `yaml:"timestamp" required:"true" doc:"Field or expression giving each record's event time: a timestamp, a number of seconds since the epoch, or an RFC 3339 string."`
	Language      string                   `yaml:"language" doc:"Expression language: generic (default), expr, python (Python: expr-lang where it means the same, else Starlark) or javascript (goja); callable and path+name in python and javascript."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send records whose timestamp fails or is not a time to this output instead of stopping."`
}

func init() {
	component.RegisterTransform("AssignTimestamps", "Sets each record's event time from a field or expression.",
		component.Inputs{Min: 1, Max: 1}, buildAssignTimestamps)
}

type assignTimestamps struct {
	who    string
	ev     *expr.Evaluator
	errors *component.ErrorOutput
}

// timestampKinds are the kinds an event time can be read from.
var timestampKinds = map[schemas.Kind]bool{schemas.Timestamp: true, schemas.Date: true, schemas.Int64: true,
	schemas.Float64: true, schemas.String: true, schemas.Any: true}

func buildAssignTimestamps(ctx *component.Context, cfg *AssignTimestampsConfig) (component.Transform, error) {
	in := ctx.Input()
	opts, ok := expr.OptionsFor(ctx, cfg.Language)
	p := expr.CompileAt(ctx, &cfg.Timestamp, in, opts)
	if !ok || p == nil {
		return nil, nil
	}
	if !timestampKinds[p.Type().Kind] {
		ctx.Errorf(ctx.At(&cfg.Timestamp), "timestamp must be a timestamp, a number of seconds since the epoch or an RFC 3339 string, but %q is %s",
			p.Text(), p.Type().Articled())
		return nil, nil
	}
	a := &assignTimestamps{who: ctx.Describe(), ev: expr.NewEvaluator(in, p)}
	a.errors = ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)
	ctx.Output(component.Main, in)
	return a, nil
}

func (a *assignTimestamps) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out := outBatch(in.Schema, in, len(in.Rows))
	out.Time = make([]time.Time, 0, len(in.Rows))
	var errs *schemas.Batch
	s := a.ev.Scope()
	defer s.Release()
	for i, row := range in.Rows {
		s.Bind(row)
		v, err := s.Eval(0)
		var t time.Time
		if err == nil {
			t, err = EventTime(v)
		}
		if err != nil {
			var stop error
			if errs, stop = failure(a.errors, errs, in, i, a.who, err); stop != nil {
				return stop
			}
			continue
		}
		out.Rows = append(out.Rows, row)
		if in.Pos != nil {
			out.Pos = append(out.Pos, in.Pos[i])
		}
		out.Time = append(out.Time, t)
	}
	if err := emitRows(emit, component.Main, out); err != nil {
		return err
	}
	return a.errors.Emit(errs, emit)
}

// The event times sluice can represent: Unix nanoseconds in an int64.
var (
	minEventTime = time.Unix(0, math.MinInt64+1)
	maxEventTime = time.Unix(0, math.MaxInt64-1)
)

var errNoTime = errors.New("not an event time")

// EventTime converts a value to an event time as Beam reads timestamps: a timestamp or date
// as it is, a number as seconds since the epoch (to the microsecond, as Beam's Timestamp),
// a string in RFC 3339.
func EventTime(v any) (time.Time, error) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case int64:
		if x > maxEventTime.Unix() || x < minEventTime.Unix() {
			return t, fmt.Errorf("%d seconds since the epoch is out of range", x)
		}
		t = time.Unix(x, 0)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x > float64(maxEventTime.Unix()) || x < float64(minEventTime.Unix()) {
			return t, fmt.Errorf("%v seconds since the epoch is out of range", x)
		}
		t = time.UnixMicro(int64(math.Round(x * 1e6)))
	case string:
		p, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(x))
		if err != nil {
			return t, fmt.Errorf("timestamp %q is not an RFC 3339 time such as 2024-05-01T10:00:00Z", x)
		}
		t = p
	case nil:
		return t, fmt.Errorf("timestamp is null: %w", errNoTime)
	default:
		return t, fmt.Errorf("timestamp is %s: %w", schemas.Describe(v), errNoTime)
	}
	if t.Before(minEventTime) || t.After(maxEventTime) {
		return time.Time{}, fmt.Errorf("timestamp %s is out of range", t.Format(time.RFC3339))
	}
	return t.UTC(), nil
}
