package python

import (
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// timestampAttrs are the attributes of a timestamp: Beam's Timestamp methods and the
// basics of Python's datetime.
var timestampAttrs = map[string]func(t time.Time) starlark.Value{
	"micros":      func(t time.Time) starlark.Value { return starlark.MakeInt64(t.UnixMicro()) },
	"year":        func(t time.Time) starlark.Value { return starlark.MakeInt(t.Year()) },
	"month":       func(t time.Time) starlark.Value { return starlark.MakeInt(int(t.Month())) },
	"day":         func(t time.Time) starlark.Value { return starlark.MakeInt(t.Day()) },
	"hour":        func(t time.Time) starlark.Value { return starlark.MakeInt(t.Hour()) },
	"minute":      func(t time.Time) starlark.Value { return starlark.MakeInt(t.Minute()) },
	"second":      func(t time.Time) starlark.Value { return starlark.MakeInt(t.Second()) },
	"microsecond": func(t time.Time) starlark.Value { return starlark.MakeInt(t.Nanosecond() / 1000) },
}

// timestampMethods are the methods of a timestamp.
var timestampMethods = map[string]func(t time.Time, args starlark.Tuple) (starlark.Value, error){
	"seconds":   func(t time.Time, _ starlark.Tuple) (starlark.Value, error) { return unixSeconds(t), nil },
	"timestamp": func(t time.Time, _ starlark.Tuple) (starlark.Value, error) { return unixSeconds(t), nil },
	"to_utc_datetime": func(t time.Time, _ starlark.Tuple) (starlark.Value, error) {
		return timestamp{t.UTC()}, nil
	},
	"to_rfc3339": func(t time.Time, _ starlark.Tuple) (starlark.Value, error) {
		return starlark.String(t.UTC().Format("2006-01-02T15:04:05.999999Z")), nil
	},
	"isoformat": func(t time.Time, _ starlark.Tuple) (starlark.Value, error) {
		return starlark.String(t.UTC().Format("2006-01-02T15:04:05.999999")), nil
	},
	"weekday": func(t time.Time, _ starlark.Tuple) (starlark.Value, error) {
		return starlark.MakeInt((int(t.Weekday()) + 6) % 7), nil
	},
	"strftime": func(t time.Time, args starlark.Tuple) (starlark.Value, error) {
		var format string
		if err := starlark.UnpackPositionalArgs("strftime", args, nil, 1, &format); err != nil {
			return nil, err
		}
		return starlark.String(strftime(t.UTC(), format)), nil
	},
}

func unixSeconds(t time.Time) starlark.Value { return starlark.Float(float64(t.UnixNano()) / 1e9) }

func (t timestamp) Attr(name string) (starlark.Value, error) {
	if f, ok := timestampAttrs[name]; ok {
		return f(t.t.UTC()), nil
	}
	m, ok := timestampMethods[name]
	if !ok {
		return nil, nil
	}
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		return m(t.t, args)
	}), nil
}

func (t timestamp) AttrNames() []string {
	var names []string
	for n := range timestampAttrs {
		names = append(names, n)
	}
	for n := range timestampMethods {
		names = append(names, n)
	}
	return names
}

// eachDirective walks a Python time format: literal gets the bytes outside directives,
// directive the letter after each %.
func eachDirective(format string, literal func(byte), directive func(byte) error) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			literal(format[i])
			continue
		}
		i++
		if err := directive(format[i]); err != nil {
			return err
		}
	}
	return nil
}

// strftime formats t with Python's directives.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	_ = eachDirective(format, func(c byte) { b.WriteByte(c) }, func(c byte) error {
		if layout, ok := strftimeLayouts[c]; ok {
			b.WriteString(t.Format(layout))
			return nil
		}
		switch c {
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(c)
		}
		return nil
	})
	return b.String()
}

// strftimeLayouts are the Go layouts of Python's strftime directives.
var strftimeLayouts = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
	'p': "PM", 'b': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'z': "-0700", 'Z': "MST",
}

// strptime parses s with Python's directives, by translating them to a Go layout.
func strptime(s, format string) (time.Time, error) {
	var b strings.Builder
	err := eachDirective(format, func(c byte) { b.WriteByte(c) }, func(c byte) error {
		switch c {
		case 'f':
			b.WriteString("000000")
		case '%':
			b.WriteByte('%')
		default:
			layout, ok := strftimeLayouts[c]
			if !ok {
				return fmt.Errorf("ValueError: strptime directive %%%c is not supported", c)
			}
			b.WriteString(layout)
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	layout := strings.Replace(b.String(), "05.000000", "05.999999", 1)
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("ValueError: time data %q does not match format %q", s, format)
	}
	return t.UTC(), nil
}

// datetimeModule is the basics of Python's datetime: datetime (construct, fromtimestamp,
// strptime, fromisoformat) and timedelta, in seconds.
func datetimeModule() starlark.Value {
	dt := &starlarkstruct.Module{Name: "datetime", Members: starlark.StringDict{
		"fromtimestamp":    starlark.NewBuiltin("fromtimestamp", fromTimestamp),
		"now":              starlark.NewBuiltin("now", now),
		"utcnow":           starlark.NewBuiltin("utcnow", now),
		"utcfromtimestamp": starlark.NewBuiltin("utcfromtimestamp", fromTimestamp),
		"strptime": starlark.NewBuiltin("strptime", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var s, format string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &s, &format); err != nil {
				return nil, err
			}
			t, err := strptime(s, format)
			return timestamp{t}, err
		}),
		"fromisoformat": starlark.NewBuiltin("fromisoformat", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var s string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &s); err != nil {
				return nil, err
			}
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999", "2006-01-02"} {
				if t, err := time.Parse(layout, s); err == nil {
					return timestamp{t.UTC()}, nil
				}
			}
			return nil, fmt.Errorf("ValueError: Invalid isoformat string: %q", s)
		}),
	}}
	return &starlarkstruct.Module{Name: "datetime", Members: starlark.StringDict{
		"datetime":  &callableModule{Module: dt, call: newDatetime},
		"timedelta": starlark.NewBuiltin("timedelta", timedelta),
	}}
}

// callableModule is a module that can also be called, as Python's datetime.datetime class.
type callableModule struct {
	*starlarkstruct.Module
	call func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)
}

func (c *callableModule) Name() string { return c.Module.Name }
func (c *callableModule) CallInternal(th *starlark.Thread, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	return c.call(th, starlark.NewBuiltin(c.Module.Name, c.call), args, kw)
}

func now(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var tz starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kw, "tz?", &tz); err != nil {
		return nil, err
	}
	return timestamp{time.Now().UTC()}, nil
}

func newDatetime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var y, mo, d, h, mi, s, us int
	if err := starlark.UnpackArgs(b.Name(), args, kw, "year", &y, "month", &mo, "day", &d,
		"hour?", &h, "minute?", &mi, "second?", &s, "microsecond?", &us); err != nil {
		return nil, err
	}
	return timestamp{time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)}, nil
}

func fromTimestamp(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var secs starlark.Value
	var tz starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kw, "t", &secs, "tz?", &tz); err != nil {
		return nil, err
	}
	f, ok := starlark.AsFloat(secs)
	if !ok {
		return nil, fmt.Errorf("TypeError: %s: expected a number, got %s", b.Name(), secs.Type())
	}
	return timestamp{time.Unix(0, 0).UTC().Add(seconds(f))}, nil
}

// timedelta is a duration in seconds (a float), as Beam compares durations with numbers.
func timedelta(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	names := []string{"days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks"}
	scale := []float64{86400, 1, 1e-6, 1e-3, 60, 3600, 604800}
	vals := make([]starlark.Value, len(names))
	pairs := make([]any, 0, 2*len(names))
	for i, n := range names {
		pairs = append(pairs, n+"?", &vals[i])
	}
	if err := starlark.UnpackArgs(b.Name(), args, kw, pairs...); err != nil {
		return nil, err
	}
	total := 0.0
	for i, v := range vals {
		if v == nil {
			continue
		}
		f, ok := starlark.AsFloat(v)
		if !ok {
			return nil, fmt.Errorf("TypeError: timedelta: %s must be a number, not %s", names[i], v.Type())
		}
		total += f * scale[i]
	}
	return starlark.Float(total), nil
}

// timeModule is the basics of Python's time.
func timeModule() starlark.Value {
	return &starlarkstruct.Module{Name: "time", Members: starlark.StringDict{
		"time": starlark.NewBuiltin("time", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return unixSeconds(time.Now()), nil
		}),
		"strftime": starlark.NewBuiltin("strftime", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var format string
			var t starlark.Value = timestamp{time.Now()}
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &format, &t); err != nil {
				return nil, err
			}
			ts, ok := t.(timestamp)
			if !ok {
				return nil, fmt.Errorf("TypeError: strftime: expected a timestamp, got %s", t.Type())
			}
			return starlark.String(strftime(ts.t.UTC(), format)), nil
		}),
	}}
}
